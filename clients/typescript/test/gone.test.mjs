// When serve goes: every call in flight fails with ClosedError, none hangs;
// close() lets what was written be answered, and kills a serve that stays.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ClosedError } from '../src/index.js';
import { MANIFEST, START, fake, home, slowPDP, start, within } from './helpers.mjs';

test('serve killed with calls in flight: each rejects ClosedError, none hangs', async (t) => {
  const c = await start(t, { ...home(t, slowPDP('0.5')), maxInFlight: 4 });
  // Four on the wire, six waiting for room.
  const calls = Array.from({ length: 10 }, () => c.list().then(() => null, (e) => e));
  assert.equal(c.inFlight, 4);
  await new Promise((r) => setTimeout(r, 100));
  process.kill(c.pid, 'SIGKILL');
  const errs = await within(5000, Promise.all(calls), 'calls in flight after the kill');
  for (const err of errs) assert.ok(err instanceof ClosedError, `got ${err}`);
  assert.equal(errs[0].code, 'closed');
  await assert.rejects(c.get('arca://app/db'), ClosedError);
  assert.deepEqual(await within(5000, c.close(), 'close'), { code: null, signal: 'SIGKILL' });
});

test('close: what was written is answered, later calls fail at once', async (t) => {
  const c = await start(t, home(t, slowPDP('0.1')));
  const inFlight = [c.list(), c.check()];
  const closing = c.close();
  await assert.rejects(c.list(), ClosedError);
  const [l, k] = await Promise.all(inFlight);
  assert.equal(l.env, 'default');
  assert.equal(k.healthy, true);
  assert.deepEqual(await closing, { code: 0, signal: null });
  assert.equal(c.close(), closing);
});

test('close kills a serve that does not exit in time', async (t) => {
  // A stand-in that ignores EOF and SIGTERM.
  const binary = fake(t, `trap '' TERM\necho '${START}' >&2\nread line\necho '${MANIFEST}'\nwhile :; do read line; done`);
  const c = await start(t, { binary, closeTimeoutMs: 200 });
  const err = await within(5000, c.close().then(() => null, (e) => e), 'close');
  assert.match(err?.message, /did not exit within 200 ms: killed/);
});

test('a stand-in that exits after answering: the calls behind fail ClosedError', async (t) => {
  const binary = fake(t, `echo '${START}' >&2\nread line\necho '${MANIFEST}'\nread line\necho '{"id":2,"ok":true,"result":{}}'\nexit 0`);
  const c = await start(t, { binary });
  const [a, b] = await Promise.allSettled([c.check(), c.check()]);
  assert.equal(a.status, 'fulfilled');
  assert.ok(b.reason instanceof ClosedError);
});
