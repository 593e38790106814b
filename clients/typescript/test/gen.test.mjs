// The generated types follow the schemas: regenerated from the binary's
// `arca schema`, they are the committed file byte for byte. And the
// generator maps each keyword the schemas use.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { generate, schemasOf, target } from '../scripts/gen-types.mjs';
import { arcaBin } from '../scripts/arca-bin.mjs';
import { generate as generateOps, kindOf, manifestOf, targets as opsTargets } from '../scripts/gen-ops.mjs';

test('src/protocol.d.ts is what arca schema generates (else: npm run gen)', () => {
  assert.equal(readFileSync(target, 'utf8'), generate(schemasOf(arcaBin())));
});

const body = (out, name) => {
  const m = new RegExp(`export type ${name} = ([^;]*(?:;\\n[^;]*)*?);\\n(?:\\n|$)`).exec(out);
  assert.ok(m, `no type ${name} in:\n${out}`);
  return m[1];
};

test('the keywords the schemas use', () => {
  const out = generate({
    a: {
      $id: 'a.json',
      type: 'object',
      properties: {
        s: { type: 'string', pattern: '^x$', maxLength: 3 },
        n: { type: 'integer', minimum: 1 },
        b: { type: 'boolean' },
        c: { const: 'k' },
        e: { enum: ['x', 'y', 2] },
        l: { type: 'array', items: { $ref: '#/$defs/t' } },
        any: true,
        empty: {},
        u: { oneOf: [{ type: 'string' }, { type: 'null' }] },
        x: { anyOf: [{ $ref: 'b.json' }, { $ref: 'b.json#/$defs/t' }] },
        m: { type: 'object', additionalProperties: { type: 'integer' } },
        'odd-key': { type: 'string' },
      },
      required: ['s', 'l'],
      allOf: [{ if: { required: ['s'] }, then: { not: { required: ['n'] } } }],
      $defs: { t: { type: 'string' } },
    },
    b: { $id: 'b.json', type: 'object', properties: { z: { type: 'number' } }, $defs: { t: { type: 'number' } } },
  });
  const a = body(out, 'WireA');
  for (const want of ['s: string;', 'n?: number;', 'b?: boolean;', 'c?: "k";', 'e?: "x" | "y" | 2;', 'l: WireAT[];', 'any?: unknown;', 'empty?: unknown;', 'u?: string | null;', 'x?: WireB | WireBT;', 'm?: Record<string, number>;', '"odd-key"?: string;']) {
    assert.ok(a.includes(want), `${want} not in ${a}`);
  }
  // Two $defs entries of one name that differ each get their schema's name.
  assert.equal(body(out, 'WireAT'), 'string');
  assert.equal(body(out, 'WireBT'), 'number');
});

test('$defs entries that say the same are one type, across schemas', () => {
  const policy = { type: 'object', properties: { allow: { type: 'boolean' } }, required: ['allow'] };
  const out = generate({
    r: { type: 'object', properties: { p: { $ref: '#/$defs/policy' } }, $defs: { policy } },
    e: { type: 'object', properties: { p: { $ref: 'urn:arca-serve:1:r#/$defs/policy' }, q: { $ref: '#/$defs/policy' } }, $defs: { policy: { ...policy, description: 'the same' } } },
  });
  assert.equal(out.match(/export type WirePolicy\b/g).length, 1);
  assert.match(body(out, 'WireE'), /p\?: WirePolicy;\n {2}q\?: WirePolicy;/);
  assert.match(out, /From e#policy, r#policy\./);
});

test('a keyword the generator does not know stops it', () => {
  assert.throws(() => generate({ a: { type: 'object', patternProperties: {} } }), /keyword patternProperties is not supported/);
  assert.throws(() => generate({ a: { $ref: 'nope.json' } }), /names no schema/);
  assert.throws(() => generate({ a: { $ref: '#/$defs/missing' } }), /not a \$defs entry/);
});

test('the generator refuses an argument it does not know, and writes nothing', async () => {
  const { spawnSync } = await import('node:child_process');
  const script = new URL('../scripts/gen-types.mjs', import.meta.url).pathname;
  const before = readFileSync(target, 'utf8');
  for (const [arg, status] of [['--bogus', 2], ['--help', 0]]) {
    const r = spawnSync(process.execPath, [script, arg], { encoding: 'utf8' });
    assert.equal(r.status, status, `${arg}: ${r.stderr}`);
    assert.match(r.stdout + r.stderr, /^usage: node scripts\/gen-types\.mjs \[--check\]/);
  }
  assert.equal(readFileSync(target, 'utf8'), before);
});

test('src/ops.js and src/ops.d.ts are what the manifest generates (else: npm run gen)', () => {
  const out = generateOps(manifestOf(arcaBin()));
  for (const [k, path] of Object.entries(opsTargets)) {
    assert.equal(readFileSync(path, 'utf8'), out[k], `${path} differs`);
  }
});

// A manifest of one request field more, memo, and one op more, jot, that
// needs it: what a row of each in manifest/ops.go makes serve publish.
function withJot(m) {
  const request = structuredClone(m.schemas.request);
  request.properties.memo = { type: 'string', maxLength: 300 };
  const schemas = { ...m.schemas, request, 'result.jot': { type: 'object', properties: { echo: { type: 'string' } } } };
  const jot = { name: 'jot', required: ['op', 'memo'], optional: ['id', 'env', 'actor', 'attestation'], consults_pdp: false, meta: false };
  return { ...m, ops: [...m.ops, jot], schemas };
}

test('an op added to the table gets a method and a result type', () => {
  const m = manifestOf(arcaBin());
  const out = generateOps(withJot(m));
  assert.ok(out.js.includes(`jot(memo, options = NONE) {\n    return this[SEND](() => line('jot', ',"op":"jot"' +\n      field(',"memo":', 'memo', memo, true) +`), out.js);
  assert.ok(out.js.includes(`{ name: 'memo', key: ',"memo":', required: true, secret: false, bool: false, raw: null }`), out.js);
  assert.ok(out.dts.includes('export type JotResult = Wire.WireResultJot;'), out.dts);
  assert.ok(out.dts.includes('jot(memo: string, options?: CallOptions): Promise<JotResult>;'), out.dts);
  assert.ok(/interface RequestFields \{\n(?:  .*\n)*  memo\?: string;/.test(out.dts), out.dts);
  const tag = { name: 'tag', required: ['op', 'label'], consults_pdp: true, meta: false };
  assert.throws(() => generateOps({ ...m, ops: [...m.ops, tag], schemas: { ...m.schemas, 'result.tag': {} } }), /takes label, which the request schema does not have/);
  const raw = structuredClone(m.schemas.request);
  raw.properties.blob = {};
  assert.throws(() => generateOps({ ...m, schemas: { ...m.schemas, request: raw } }), /blob is not a string, a boolean, an integer, an array of strings or integers, an object of strings or an object of integers/);
});

test('a field that is not a string is typed and sent as its schema says, or refused', () => {
  const str = { type: 'string' };
  const strs = { type: 'array', items: str };
  for (const [schema, want] of [
    [strs, 'strings'],
    [{ type: 'object', additionalProperties: str }, 'map'],
    [{ type: 'object', additionalProperties: strs }, 'multimap'],
    [{ type: 'object', additionalProperties: { anyOf: [str, strs] } }, 'multimap'],
    [{ type: 'object', additionalProperties: { anyOf: [str, { type: 'integer' }] } }, undefined],
    [{ type: 'array', items: { type: 'integer' } }, 'numbers'],
    [{ type: 'integer', minimum: 0 }, 'int'],
    [{ type: 'array', items: { type: 'number' } }, undefined],
    [{ type: 'object' }, undefined],
    [{}, undefined],
    [{ enum: ['grant', 'deny'] }, 'string'],
    [{ enum: ['grant', 1] }, undefined],
    [{ type: 'object', additionalProperties: false, properties: { uses: { type: 'integer' }, ttl_s: { type: 'integer' } } }, 'ints'],
    [{ type: 'object', properties: { uses: { type: 'integer' } } }, undefined],
    [{ type: 'object', additionalProperties: false, properties: { uses: { type: 'integer' }, name: str } }, undefined],
  ]) {
    assert.equal(kindOf(schema), want, JSON.stringify(schema));
  }
  const out = generateOps(manifestOf(arcaBin()));
  assert.ok(out.js.includes(`rawField(',"query":', 'query', options.query, 'multimap')`), out.js);
  assert.ok(out.js.includes(`rawField(',"args":', 'args', options.args, 'strings')`), out.js);
  assert.ok(out.dts.includes('headers?: Readonly<Record<string, string>>;'), out.dts);
  assert.ok(out.js.includes(`rawField(',"scope":', 'scope', options.scope, 'ints')`), out.js);
  assert.ok(out.dts.includes('scope?: { readonly ttl_s?: number; readonly uses?: number; };'), out.dts);
  assert.ok(out.js.includes(`rawField(',"if_version":', 'if_version', options.if_version, 'int')`), out.js);
  assert.ok(out.js.includes(`rawField(',"versions":', 'versions', options.versions, 'numbers')`), out.js);
  assert.ok(out.dts.includes('rollback(ref: string, version: number, options?: CallOptions): Promise<RollbackResult>;'), out.dts);
  assert.ok(out.dts.includes('versions?: readonly number[];'), out.dts);
  assert.ok(out.dts.includes("approve(approval: string, decision: 'grant' | 'deny', approver: string, options?: CallOptions): Promise<ApproveResult>;"), out.dts);
});

test('a field added to the table is sent: a client generated in a scratch copy sends it', async (t) => {
  const { cpSync, mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { fake } = await import('./helpers.mjs');
  const dir = mkdtempSync(join(tmpdir(), 'arca-ts-scratch-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const src = new URL('../src/', import.meta.url).pathname;
  cpSync(src, join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n');
  const out = generateOps(withJot(manifestOf(arcaBin())));
  writeFileSync(join(dir, 'src', 'ops.js'), out.js);
  const { Client } = await import(join(dir, 'src', 'index.js'));
  // A stand-in for serve that keeps the line of request 2 and answers it.
  const got = join(dir, 'line');
  const binary = fake(t, `echo '{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"start","message":"fake","source":"serve"}' >&2
read line
echo '{"id":1,"ok":true,"result":{"protocol":"arca-serve/1"}}'
read -r line
printf '%s' "$line" > '${got}'
echo '{"id":2,"ok":true,"result":{"echo":"a \\"memo\\""}}'
read line
exit 0`);
  const c = await Client.start({ binary, environ: { PATH: process.env.PATH } });
  t.after(() => c.close().catch(() => {}));
  const r = await c.jot('a "memo"', { actor: 'me' });
  assert.equal(r.echo, 'a "memo"');
  assert.deepEqual(JSON.parse(readFileSync(got, 'utf8')), { id: 2, op: 'jot', actor: 'me', memo: 'a "memo"' });
});
