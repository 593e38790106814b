// The uses (http, exec, proxy): the lines the client writes for them, the
// results and errors it gives back, against a stand-in for serve
// (use-serve.test.mjs has them against a real serve).

import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ArcaError } from '../src/index.js';
import { MANIFEST, START, fake, start } from './helpers.mjs';

const HTTP = '{"service":"echo","status":503,"headers":{"Content-Type":["text/plain"]},"body":"down","truncated":false,"redactions":[{"ref":"arca://app/token","count":1}],"elapsed_ms":7}';
const EXEC = '{"action":"hello","exit_code":0,"signal":"","stdout":"hi","stderr":"","truncated":{"stdout":false,"stderr":false},"redactions":[],"elapsed_ms":2}';
const PROXY = '{"base_urls":{"echo":"http://127.0.0.1:4000/echo"},"token":"t0k","expires_at":"2026-12-01T00:00:00.000000000Z"}';
const FAILED = '{"code":"upstream_failed","message":"connect: refused","details":{"cause":"connect"}}';

// A stand-in that logs each request line after the manifest to log and
// answers it by its op: service "down" and action "down" with
// upstream_failed.
function logging(t) {
  const dir = mkdtempSync(join(tmpdir(), 'arca-ts-use-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'lines');
  const bin = fake(t, `echo '${START}' >&2
read line
echo '${MANIFEST}'
while IFS= read -r line; do
  printf '%s\\n' "$line" >> '${log}'
  id=$(printf '%s' "$line" | sed 's/^{"id":\\([0-9]*\\),.*/\\1/')
  case "$line" in
  *'"down"'*) printf '{"id":%s,"ok":false,"error":%s}\\n' "$id" '${FAILED}' ;;
  *'"op":"http"'*) printf '{"id":%s,"ok":true,"result":%s,"policy":{"allow":true}}\\n' "$id" '${HTTP}' ;;
  *'"op":"exec"'*) printf '{"id":%s,"ok":true,"result":%s}\\n' "$id" '${EXEC}' ;;
  *'"op":"proxy"'*) printf '{"id":%s,"ok":true,"result":%s}\\n' "$id" '${PROXY}' ;;
  esac
done`);
  return { bin, lines: () => readFileSync(log, 'utf8').split('\n').filter(Boolean) };
}

test('the uses: their lines as the request schema says, their results and upstream_failed', async (t) => {
  const s = logging(t);
  const c = await start(t, { binary: s.bin, environ: { PATH: process.env.PATH } });
  const h = await c.http('echo', 'POST', '/a', { query: { q: ['1', '2'], r: 'x' }, headers: { 'X-Test': 'y' }, body: 'é' });
  assert.deepEqual({ ...h, policy: undefined }, { ...JSON.parse(HTTP), policy: undefined });
  assert.deepEqual(h.policy, { allow: true });
  assert.deepEqual(await c.exec('hello', { args: ['--dry-run'] }), JSON.parse(EXEC));
  assert.deepEqual(await c.proxy({ services: ['echo'] }), JSON.parse(PROXY));
  await c.proxy({ stop: true });
  await c.call('exec', { action: 'hello', args: [] });
  for (const p of [c.http('down', 'GET', '/'), c.exec('down')]) {
    const err = await p.then(() => null, (e) => e);
    assert.ok(err instanceof ArcaError, `got ${err}`);
    assert.equal(err.code, 'upstream_failed');
    assert.deepEqual(err.details, { cause: 'connect' });
  }
  assert.deepEqual(s.lines(), [
    '{"id":2,"op":"http","service":"echo","method":"POST","path":"/a","query":{"q":["1","2"],"r":"x"},"headers":{"X-Test":"y"},"body":"é"}',
    '{"id":3,"op":"exec","action":"hello","args":["--dry-run"]}',
    '{"id":4,"op":"proxy","services":["echo"]}',
    '{"id":5,"op":"proxy","stop":true}',
    '{"id":6,"op":"exec","action":"hello","args":[]}',
    '{"id":7,"op":"http","service":"down","method":"GET","path":"/"}',
    '{"id":8,"op":"exec","action":"down"}',
  ]);
});

test('a use field of the wrong shape is refused before anything is sent, naming no entry', async (t) => {
  const s = logging(t);
  const c = await start(t, { binary: s.bin, environ: { PATH: process.env.PATH } });
  for (const [p, want] of [
    [() => c.exec('hello', { args: 'x' }), /args must be an array of strings/],
    [() => c.exec('hello', { args: ['ok', 7] }), /args must be an array of strings/],
    [() => c.http('echo', 'GET', '/', { headers: { 'X-Secret-Name': 1 } }), /each entry of headers must be a string$/],
    [() => c.http('echo', 'GET', '/', { query: { q: [1] } }), /each entry of query must be a string or an array of strings/],
    [() => c.http('echo', 'GET', '/', { query: ['a'] }), /query must be an object/],
    [() => c.proxy({ services: [null] }), /services must be an array of strings/],
  ]) {
    const err = await p().then(() => null, (e) => e);
    assert.ok(err instanceof TypeError, `got ${err}`);
    assert.match(err.message, want);
    assert.doesNotMatch(err.message, /X-Secret-Name/);
  }
  await c.exec('hello');
  assert.deepEqual(s.lines(), ['{"id":2,"op":"exec","action":"hello"}']);
});
