// The wire against stand-ins for serve that misbehave: the client fails
// cleanly (serve killed, every call a ClosedError saying why), holds no more
// than a line's cap, and ignores fields it does not know.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClosedError } from '../src/index.js';
import { Lines, TextLines } from '../src/lines.js';
import { MANIFEST, START, fake, start, within } from './helpers.mjs';

const PATH = { PATH: process.env.PATH };

// A stand-in that starts, answers the manifest, then runs body for the
// next request.
function serve(t, body) {
  return fake(t, `echo '${START}' >&2\nread line\necho '${MANIFEST}'\nread line\n${body}\nread line\nexit 0`);
}

async function closedBy(p, cause) {
  const err = await within(5000, p.then(() => null, (e) => e), 'the call');
  assert.ok(err instanceof ClosedError, `got ${err}`);
  assert.match(err.message, cause);
  return err;
}

test('unknown fields are ignored, capabilities passed on as they are', async (t) => {
  const c = await start(t, { binary: fake(t, `echo '${START}' >&2
read line
echo '{"id":1,"ok":true,"result":{"protocol":"arca-serve/1","capabilities":{"watch":true,"batch":{"max":8}},"later":1},"extra":{}}'
read line
echo '{"id":2,"ok":true,"result":{"protocol":"arca-serve/1","capabilities":{"watch":true,"batch":{"max":8}}}}'
read line
echo '{"id":3,"ok":true,"result":{"ref":"arca://app/db","env":"default","value":"v","version":1,"created_at":"x","updated_at":"x","new_field":[1]},"trace":"t"}'
read line
exit 0`) });
  assert.deepEqual((await c.manifest()).capabilities, { watch: true, batch: { max: 8 } });
  const g = await c.get('arca://app/db');
  assert.equal(g.value.reveal(), 'v');
  assert.deepEqual(g.new_field, [1]);
});

test('a response with another id: the wire is out of step, serve is stopped', async (t) => {
  const c = await start(t, { binary: serve(t, `echo '{"id":7,"ok":true,"result":{}}'`) });
  const err = await closedBy(c.list(), /request 2 carries id 7: the wire is out of step/);
  assert.match(err.cause.message, /out of step/);
  await assert.rejects(c.list(), ClosedError);
});

test('a response no request waits for stops serve', async (t) => {
  const binary = fake(t, `echo '${START}' >&2\nread line\necho '${MANIFEST}'\necho '{"id":9,"ok":true,"result":{}}'\nsleep 5`);
  const c = await start(t, { binary });
  // Time for the stray line to arrive before the next request goes out.
  await new Promise((r) => setTimeout(r, 500));
  await closedBy(c.list(), /with no request waiting for it/);
});

test('a response that is not JSON fails its call only', async (t) => {
  const binary = serve(t, `echo 'not json'\nread line\necho '{"id":3,"ok":true,"result":{"env":"e"}}'`);
  const c = await start(t, { binary });
  await assert.rejects(c.list(), /a response that is not a JSON object \(8 bytes\)/);
  assert.equal((await c.list()).env, 'e');
});

test('a response line over 8 MiB stops serve, holding no more than the cap', async (t) => {
  const binary = serve(t, `head -c 9000000 /dev/zero | tr '\\0' a`);
  const c = await start(t, { binary, environ: PATH });
  await closedBy(c.list(), /a response line longer than 8388608 bytes/);
});

test('an event line over 4 MiB stops serve, and the stream says why', async (t) => {
  const breaks = [];
  const binary = serve(t, `head -c 5000000 /dev/zero | tr '\\0' a >&2`);
  const c = await start(t, { binary, environ: PATH, onEvent: (e, err) => err && breaks.push(err.reason) });
  await closedBy(c.list(), /an audit event line longer than 4194304 bytes/);
  assert.deepEqual(breaks, ['too_long']);
});

test('Lines: split across chunks, exact bytes, bounded', () => {
  const got = [];
  let long = 0;
  const l = new Lines(5, (b) => got.push(b.toString('latin1')), () => long++);
  l.push(Buffer.from('ab\ncd'));
  l.push(Buffer.from('e\n\n\xff\r', 'latin1'));
  assert.equal(l.pending, 2);
  l.push(Buffer.from('\n'));
  assert.deepEqual(got, ['ab', 'cde', '', '\xff\r']);
  l.push(Buffer.from('1234'));
  l.push(Buffer.from('56'));
  assert.equal(long, 1);
  assert.equal(l.pending, 0);
  l.push(Buffer.from('x\n'));
  assert.equal(got.length, 4, 'a stopped splitter hands nothing on');
  const m = new Lines(3, () => {}, () => long++);
  m.push(Buffer.from('abcd\n'));
  assert.equal(long, 2);
});

test('TextLines: whole lines decoded once, a character split across chunks kept whole, bounded in bytes', () => {
  const got = [];
  let long = 0;
  const l = new TextLines(6, (s) => got.push(s), () => long++);
  const euro = Buffer.from('\u20ac'); // three bytes
  l.push(Buffer.concat([Buffer.from('ab\nc'), euro.subarray(0, 1)]));
  l.push(Buffer.concat([euro.subarray(1), Buffer.from('\n\n')]));
  l.push(Buffer.from('\xff\n', 'latin1'));
  assert.deepEqual(got, ['ab', 'c\u20ac', '', '\ufffd']);
  // Six bytes in two characters fit; seven in three do not.
  l.push(Buffer.from('\u20ac\u20ac\n'));
  assert.equal(long, 0);
  assert.equal(got.at(-1), '\u20ac\u20ac');
  l.push(Buffer.from('x\u20ac\u20ac\ny\n'));
  assert.equal(long, 1);
  l.push(Buffer.from('z\n'));
  assert.equal(got.length, 5, 'a stopped splitter hands nothing on');
  const m = new TextLines(3, () => {}, () => long++);
  m.push(Buffer.from('ab'));
  m.push(Buffer.from('cd'));
  assert.equal(long, 2, 'a torn line past the cap stops it');
  // The cap counts the bytes that came, not those of the U+FFFD each bad
  // byte becomes; the lines before one past it are handed on.
  const bad = [];
  const n = new TextLines(3, (s) => bad.push(s), () => long++);
  n.push(Buffer.from('\xff\xff\xff\nab\nabcd\nx\n', 'latin1'));
  assert.deepEqual(bad, ['\ufffd\ufffd\ufffd', 'ab']);
  assert.equal(long, 3);
});
