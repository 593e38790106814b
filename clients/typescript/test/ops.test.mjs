// Every op, typed, and every error code with its wire code and verdict.

import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ArcaError, ClosedError, Secret } from '../src/index.js';
import { home, pdp, start } from './helpers.mjs';

const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/;

async function code(p, want) {
  const err = await p.then(() => null, (e) => e);
  assert.ok(err instanceof ArcaError, `want ArcaError ${want}, got ${err}`);
  assert.equal(err.code, want);
  assert.equal(err.name, 'ArcaError');
  return err;
}

test('every op', async (t) => {
  const c = await start(t, home(t));
  const p = await c.put('arca://app/db', 's3cret', { actor: 'agent:test' });
  assert.equal(p.ref, 'arca://app/db');
  assert.equal(p.env, 'default');
  assert.equal(p.version, 1);
  assert.equal(p.created, true);
  assert.match(p.created_at, TIME);
  assert.equal(p.policy, undefined); // no PDP, no verdict
  const g = await c.get('arca://app/db', { attestation: 'claim' });
  assert.ok(g.value instanceof Secret);
  assert.equal(g.value.reveal(), 's3cret');
  assert.equal(g.version, 1);
  assert.equal(g.rotated_at, undefined);
  const r = await c.rotate('arca://app/db', new Secret('n3w'));
  assert.equal(r.version, 2);
  assert.match(r.rotated_at, TIME);
  assert.equal((await c.get('arca://app/db')).value.reveal(), 'n3w');
  const l = await c.list();
  assert.deepEqual(l.records.map((x) => [x.ref, x.version]), [['arca://app/db', 2]]);
  assert.equal(l.truncated, false);
  assert.equal(l.omitted, 0);
  assert.equal('value' in l.records[0], false);
  const k = await c.check();
  assert.equal(k.healthy, true);
  assert.equal(k.records, 1);
  assert.equal(k.kind, 'file');
  const m = await c.manifest();
  assert.equal(m.protocol, 'arca-serve/1');
  assert.deepEqual(m.ops.map((o) => o.name), ['get', 'put', 'rm', 'rotate', 'list', 'check', 'manifest', 'shutdown', 'scrub', 'http', 'exec', 'proxy', 'revoke', 'approve', 'approval', 'history', 'rollback', 'undelete', 'destroy', 'changes']);
  assert.equal(m.default_env, 'default');
  assert.deepEqual(m.error_codes, ['bad_request', 'unknown_op', 'denied', 'pdp_unreachable', 'not_found', 'op_error', 'upstream_failed', 'approval_required', 'conflict']);
  // capabilities is passed on as serve gives it; this build promises the chain.
  assert.deepEqual(m.capabilities.audit_chain, { field: 'prev', hash: 'sha256' });
  const rm = await c.rm('arca://app/db');
  assert.deepEqual([rm.removed, rm.version], [true, 2]);
  await code(c.get('arca://app/db'), 'not_found');
  assert.deepEqual(await c.shutdown(), {});
  assert.deepEqual(await c.close(), { code: 0, signal: null });
  await assert.rejects(c.get('arca://app/db'), ClosedError);
});

test('bad_request, unknown_op, not_found', async (t) => {
  const c = await start(t, home(t));
  await code(c.put('arca://bad ref', 'x'), 'bad_request');
  await code(c.get('arca://app/db', { env: 'nope' }), 'bad_request');
  await code(c.call('put', { ref: 'arca://app/db' }), 'bad_request'); // no value
  const err = await code(c.call('frobnicate'), 'unknown_op');
  assert.equal(err.message, 'unknown op "frobnicate"');
  const cli = await code(c.call('export'), 'unknown_op');
  assert.equal(cli.message, '"export" is not served — use the single-shot CLI');
  await code(c.rotate('arca://app/missing', 'x'), 'not_found');
  await code(c.rm('arca://app/missing'), 'not_found');
  // A value serve cannot read (a lone surrogate is refused as JSON) is
  // answered with id null: still this call's answer, and the wire goes on.
  await code(c.put('arca://app/db', 'bad\ud800'), 'bad_request');
  assert.equal((await c.put('arca://app/db', 'ok')).version, 1);
});

test('call: any op by name, its value a Secret; unknown fields are refused here', async (t) => {
  const c = await start(t, home(t));
  await c.call('put', { ref: 'arca://app/db', value: 'v' });
  const g = await c.call('get', { ref: 'arca://app/db' });
  assert.ok(g.value instanceof Secret);
  await assert.rejects(c.call('get', { ref: 'arca://app/db', REF: 'x' }), /no request field "REF"/);
  await assert.rejects(c.get(42), /ref must be a string/);
  await assert.rejects(c.put('arca://app/db', 42), /a value is a string or a Secret/);
});

test('a request line over serve\'s cap is refused before it is sent', async (t) => {
  const c = await start(t, home(t));
  await assert.rejects(c.get('arca://app/db', { attestation: 'a'.repeat(4 << 20) }), RangeError);
  assert.equal(c.inFlight, 0);
  assert.equal((await c.list()).env, 'default');
});

test('denied carries the verdict', async (t) => {
  const c = await start(t, home(t, pdp({ allow: false, reason: 'not today' })));
  const err = await code(c.get('arca://app/db'), 'denied');
  assert.equal(err.message, 'denied by policy: not today');
  assert.deepEqual(err.policy, { allow: false, reason: 'not today' });
});

test('an allow\'s verdict is on the result, and on a later error', async (t) => {
  const c = await start(t, home(t, pdp({ allow: true, reason: 'fine', obligations: ['log'] })));
  const p = await c.put('arca://app/db', 'v');
  assert.deepEqual(p.policy, { allow: true, reason: 'fine', obligations: ['log'] });
  const err = await code(c.get('arca://app/missing'), 'not_found');
  assert.deepEqual(err.policy, { allow: true, reason: 'fine', obligations: ['log'] });
});

test('pdp_unreachable', async (t) => {
  const c = await start(t, home(t, '[serve.pdp]\nexec = "exit 3"\n'));
  const err = await code(c.list(), 'pdp_unreachable');
  assert.equal(err.policy, undefined);
  assert.match(err.message, /exited with status 3/);
});

test('op_error: a commit that fails', async (t) => {
  const h = home(t);
  const c = await start(t, h);
  await c.put('arca://app/db', 'v1');
  const tmp = join(h.dir, '.local', 'share', 'arca', 'default.vault.tmp');
  mkdirSync(join(tmp, 'x'), { recursive: true });
  const err = await code(c.put('arca://app/db', 'v2'), 'op_error');
  assert.match(err.message, /audited but not committed/);
  rmSync(tmp, { recursive: true });
  assert.equal((await c.get('arca://app/db')).value.reveal(), 'v1');
});
