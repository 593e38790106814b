// examples/embed.mjs, run as an embedder would: arca from PATH, a home
// holding the three secrets, a child that checks its environment.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { arca, bin, home } from './helpers.mjs';

const example = join(dirname(fileURLToPath(import.meta.url)), '..', 'examples', 'embed.mjs');

// A home for the example: the config it pins, and a directory to run in
// whose arca.toml has a PDP that denies everything, which serve must not read.
function exampleHome(t) {
  const h = home(t, '[serve.pdp]\nexec = "echo \'{\\"allow\\": false}\'"\n');
  mkdirSync(join(h.dir, '.config', 'arca'), { recursive: true });
  writeFileSync(join(h.dir, '.config', 'arca', 'arca.toml'), '');
  return h;
}

function run(h, ...argv) {
  const env = { HOME: h.dir, PATH: `${dirname(bin)}:${process.env.PATH}` };
  // h.dir holds the arca.toml that denies everything.
  return spawnSync(process.execPath, [example, ...argv], { env, cwd: h.dir, encoding: 'utf8' });
}

const check = (db, api, token) => ['sh', '-c', `[ "$DB_PASSWORD" = '${db}' ] && [ "$API_KEY" = '${api}' ] && [ "$TOKEN" = '${token}' ]`];

test('the example fills the child\'s environment and exits with its status', (t) => {
  const h = exampleHome(t);
  for (const [ref, value] of [['app/db', 'pw-1'], ['app/api', 'key-2'], ['app/token', 'tok-3']]) arca(h, ['put', `arca://${ref}`], value);
  let r = run(h, ...check('pw-1', 'key-2', 'tok-3'));
  assert.equal(r.status, 0, r.stderr);
  r = run(h, ...check('pw-1', 'wrong', 'tok-3'));
  assert.equal(r.status, 1);
  r = run(h, 'sh', '-c', 'exit 7');
  assert.equal(r.status, 7);
  // The parent's environment is passed on beside the secrets.
  r = run(h, 'sh', '-c', '[ -n "$HOME" ] && [ -n "$DB_PASSWORD" ]');
  assert.equal(r.status, 0);
});

test('the example fails, without a value, when a secret is missing', (t) => {
  const h = exampleHome(t);
  arca(h, ['put', 'arca://app/db'], 'pw-1');
  const r = run(h, 'sh', '-c', 'exit 0');
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /not found/);
  assert.equal(r.stderr.includes('pw-1'), false);
});

test('the example pins its config: without the file it does not start', (t) => {
  const h = exampleHome(t);
  rmSync(join(h.dir, '.config', 'arca', 'arca.toml'));
  const r = run(h, 'sh', '-c', 'exit 0');
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /does not exist/);
});

test('the example is at most 25 lines', () => {
  assert.ok(readFileSync(example, 'utf8').trimEnd().split('\n').length <= 25);
});
