// The generated types follow the schemas: regenerated from the binary's
// `arca schema`, they are the committed file byte for byte. And the
// generator maps each keyword the schemas use.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { generate, schemasOf, target } from '../scripts/gen-types.mjs';
import { arcaBin } from '../scripts/arca-bin.mjs';
import { generate as generateOps, manifestOf, targets as opsTargets } from '../scripts/gen-ops.mjs';

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

test('an op added to the table gets a method and a result type', () => {
  const schemas = { 'result.peek': { type: 'object', properties: { value: { type: 'string' } } } };
  const out = generateOps({ ops: [{ name: 'peek', required: ['op', 'ref'], consults_pdp: true, meta: false }], schemas });
  assert.ok(out.js.includes("peek(ref, options = NONE) {\n    return this[SEND]('peek', ref, undefined, options);"), out.js);
  assert.ok(out.dts.includes("export type PeekResult = WithPolicy<Omit<Wire.WireResultPeek, 'value'> & { value: Secret }>;"), out.dts);
  assert.ok(out.dts.includes('peek(ref: string, options?: CallOptions): Promise<PeekResult>;'), out.dts);
  assert.throws(() => generateOps({ ops: [{ name: 'tag', required: ['op', 'label'], consults_pdp: true, meta: false }], schemas: { 'result.tag': {} } }), /requires label/);
});
