// examples/cas.mjs: the compare-and-set loop the README shows whole. Its
// update is held to what it promises with another writer made to win the
// first round, and the script runs as an embedder would run it.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { update } from '../examples/cas.mjs';
import { bin, home, start } from './helpers.mjs';

const example = join(dirname(fileURLToPath(import.meta.url)), '..', 'examples', 'cas.mjs');
const REF = 'arca://app/keys';

async function seeded(t) {
  const h = home(t);
  const c = await start(t, h);
  await c.put(REF, 'key-a');
  return { h, c };
}

test('a write between the read and the put is kept', async (t) => {
  const { c } = await seeded(t);
  const calls = [];
  const put = await update(c, REF, async (value) => {
    calls.push(value.reveal());
    if (calls.length === 1) await c.put(REF, `${value.reveal()}\nkey-b`); // another writer, between this get and this put
    return `${value.reveal()}\nkey-c`;
  });
  assert.deepEqual(calls, ['key-a', 'key-a\nkey-b']);
  assert.equal(put.version, 3);
  assert.equal((await c.get(REF)).value.reveal(), 'key-a\nkey-b\nkey-c');
});

test('it gives up after its tries', async (t) => {
  const { c } = await seeded(t);
  const late = async (value) => {
    await c.put(REF, `${value.reveal()}\nother`);
    return 'never-written';
  };
  const err = await update(c, REF, late, 3).then(() => null, (e) => e);
  assert.match(err.message, /changed under each of 3 tries/);
  assert.equal(err.message.includes('never-written'), false);
  assert.equal((await c.get(REF)).version, 4);
});

test('the script appends a line', async (t) => {
  const { h, c } = await seeded(t);
  // The config it pins, and where it runs an arca.toml whose PDP denies
  // everything, which serve must not read.
  mkdirSync(join(h.dir, '.config', 'arca'), { recursive: true });
  writeFileSync(join(h.dir, '.config', 'arca', 'arca.toml'), '');
  const cwd = join(h.dir, 'elsewhere');
  mkdirSync(cwd);
  writeFileSync(join(cwd, 'arca.toml'), '[serve.pdp]\nexec = "echo \'{\\"allow\\": false}\'"\n');
  const env = { HOME: h.dir, PATH: `${dirname(bin)}:${process.env.PATH}` };
  const r = spawnSync(process.execPath, [example, REF], { env, cwd, input: 'key-d\n', encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'version 2\n');
  assert.equal((await c.get(REF)).value.reveal(), 'key-a\nkey-d');
});

test('the README shows it whole', () => {
  const text = readFileSync(example, 'utf8');
  assert.ok(text.trimEnd().split('\n').length <= 40);
  assert.ok(readFileSync(join(dirname(example), '..', 'README.md'), 'utf8').includes('```js\n' + text + '```\n'));
});
