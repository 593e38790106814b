// Versions, history and compare-and-set (SPEC §11) against a real serve:
// every op of it typed, the ConflictError of an if_version that lost, and
// no value in a result that is not a get's.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ArcaError, ConflictError, Secret } from '../src/index.js';
import { home, start } from './helpers.mjs';

const REF = 'arca://app/db';
const VALUES = ['hist-canary-1', 'hist-canary-2', 'hist-canary-3'];

/** A client on a fresh home whose REF holds the three VALUES, versions 1 to 3. */
async function seeded(t) {
  const c = await start(t, home(t));
  for (const v of VALUES) await c.put(REF, v);
  return c;
}

async function code(p, want) {
  const err = await p.then(() => null, (e) => e);
  assert.ok(err instanceof ArcaError, `want ArcaError ${want}, got ${err}`);
  assert.equal(err.code, want);
  return err;
}

function noValue(x) {
  const text = JSON.stringify(x) + String(x?.message ?? '');
  for (const v of VALUES) assert.equal(text.includes(v), false, 'a value in a result or error');
}

test('history lists the versions newest first, without a value', async (t) => {
  const c = await seeded(t);
  const h = await c.history(REF);
  assert.equal(h.ref, REF);
  assert.equal(h.env, 'default');
  assert.equal(h.current, 3);
  assert.equal(h.max_versions, 10);
  assert.equal(h.deleted_at, undefined);
  assert.deepEqual(h.versions.map((v) => [v.version, v.state]), [[3, 'current'], [2, 'previous'], [1, 'previous']]);
  assert.ok(h.versions[1].created_at <= h.versions[0].created_at);
  noValue(h);
  await code(c.history('arca://app/never'), 'not_found');
});

test('get reads an earlier version, and names a version not kept', async (t) => {
  const c = await seeded(t);
  const g = await c.get(REF, { version: 1 });
  assert.ok(g.value instanceof Secret);
  assert.equal(g.value.reveal(), 'hist-canary-1');
  assert.equal(String(g.value), '<redacted>');
  assert.equal(g.version, 1);
  assert.equal((await c.get(REF)).version, 3);
  const e = await code(c.get(REF, { version: 9 }), 'not_found');
  assert.match(e.message, /version 9/);
});

test('rollback writes an earlier value as a new version', async (t) => {
  const c = await seeded(t);
  const r = await c.rollback(REF, 1);
  assert.equal(r.version, 4);
  assert.equal(r.rolled_back_from, 1);
  assert.equal(r.created, false);
  noValue(r);
  assert.equal((await c.get(REF)).value.reveal(), 'hist-canary-1');
  const e = await code(c.rollback(REF, 7), 'not_found');
  assert.match(e.message, /version 7/);
  const lost = await code(c.rollback(REF, 2, { if_version: 3 }), 'conflict');
  assert.ok(lost instanceof ConflictError);
  assert.equal(lost.currentVersion, 4);
});

test('rm is undone by undelete; list shows the deleted on demand', async (t) => {
  const c = await seeded(t);
  await c.rm(REF);
  await code(c.get(REF), 'not_found');
  assert.deepEqual((await c.list()).records, []);
  const l = await c.list({ deleted: true });
  assert.deepEqual(l.records.map((x) => [x.ref, x.version]), [[REF, 3]]);
  assert.equal(typeof l.records[0].deleted_at, 'string');
  const h = await c.history(REF);
  assert.equal(h.current, null);
  assert.equal(h.deleted_at, l.records[0].deleted_at);
  assert.equal(h.versions[0].state, 'deleted');
  const u = await c.undelete(REF);
  assert.equal(u.version, 4);
  assert.equal(u.undeleted, true);
  assert.equal((await c.get(REF)).value.reveal(), 'hist-canary-3');
  await code(c.undelete(REF), 'not_found');
});

test('destroy erases versions, then the name; numbering continues', async (t) => {
  const c = await seeded(t);
  const d = await c.destroy(REF, { versions: [1, 2] });
  assert.deepEqual(d.destroyed, [1, 2]);
  assert.equal(d.removed, false);
  assert.deepEqual((await c.history(REF)).versions.map((v) => v.version), [3]);
  const e = await code(c.destroy(REF, { versions: [2] }), 'not_found');
  assert.match(e.message, /version 2/);
  const all = await c.destroy(REF);
  assert.deepEqual(all.destroyed, [3]);
  assert.equal(all.removed, true);
  await code(c.get(REF), 'not_found');
  assert.equal((await c.put(REF, 'after')).version, 4);
});

test('changes from a cursor name each changed ref once, without a value', async (t) => {
  const c = await seeded(t);
  const first = await c.changes();
  assert.deepEqual(first.changes, []);
  assert.equal(first.reset, false);
  assert.equal(first.truncated, false);
  assert.deepEqual((await c.changes({ since: first.cursor })).changes, []);
  await c.put('arca://app/api', 'hist-canary-2');
  await c.rm(REF);
  const got = await c.changes({ since: first.cursor });
  assert.deepEqual(got.changes.map((x) => [x.ref, x.version, x.state]).sort(), [['arca://app/api', 1, 'current'], [REF, 3, 'deleted']]);
  noValue(got);
  assert.deepEqual((await c.changes({ since: got.cursor })).changes, []);
  await code(c.changes({ since: 'not-a-cursor' }), 'bad_request');
});

test('put with if_version wins once; the loser gets the current version', async (t) => {
  const c = await seeded(t);
  const seen = await c.get(REF);
  assert.equal((await c.put(REF, 'mine', { if_version: seen.version })).version, 4);
  const lost = await code(c.put(REF, 'theirs', { if_version: seen.version }), 'conflict');
  assert.ok(lost instanceof ConflictError);
  assert.equal(lost.name, 'ConflictError');
  assert.equal(lost.currentVersion, 4);
  assert.equal(lost.details.current_version, 4);
  assert.equal(`${lost.message} ${JSON.stringify(lost)}`.includes('theirs'), false);
  assert.equal((await c.get(REF)).value.reveal(), 'mine');
  assert.equal((await c.put('arca://app/new', 'x', { if_version: 0 })).version, 1);
  const none = await code(c.rotate('arca://app/none', 'x', { if_version: 2 }), 'conflict');
  assert.equal(none.currentVersion, 0);
});

test('a version field of the wrong shape is refused before it is sent', async (t) => {
  const c = await seeded(t);
  await assert.rejects(c.put(REF, 'x', { if_version: '1' }), TypeError);
  await assert.rejects(c.put(REF, 'x', { if_version: -1 }), TypeError);
  await assert.rejects(c.get(REF, { version: 1.5 }), TypeError);
  await assert.rejects(c.destroy(REF, { versions: ['1'] }), TypeError);
  assert.equal((await c.get(REF)).version, 3);
});

test('writers racing with one if_version, pipelined: exactly one wins', async (t) => {
  const c = await seeded(t);
  const settled = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => c.put(REF, `racer-${i}`, { if_version: 3 })));
  const won = settled.filter((s) => s.status === 'fulfilled');
  assert.equal(won.length, 1);
  assert.equal(won[0].value.version, 4);
  for (const s of settled.filter((x) => x.status === 'rejected')) {
    assert.ok(s.reason instanceof ConflictError, String(s.reason));
    assert.equal(s.reason.currentVersion, 4);
  }
  assert.equal((await c.history(REF)).current, 4);
});
