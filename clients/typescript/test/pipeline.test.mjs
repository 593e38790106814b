// Pipelining: concurrent callers share the wire, each gets its own answer;
// the window bounds what is on it; a cancelled call keeps its slot.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { home, slowPDP, start } from './helpers.mjs';

test('1,000 gets from 20 concurrent callers, each its own value', async (t) => {
  const c = await start(t, { ...home(t), maxInFlight: 32 });
  await Promise.all(Array.from({ length: 10 }, (_, i) => c.put(`arca://app/k${i}`, `v${i}`)));
  let most = 0;
  const loop = async (g) => {
    const wrong = [];
    for (let n = 0; n < 50; n++) {
      const i = (g + n) % 10;
      const got = await c.get(`arca://app/k${i}`);
      most = Math.max(most, c.inFlight);
      if (got.value.reveal() !== `v${i}` || got.ref !== `arca://app/k${i}`) wrong.push(i);
    }
    return wrong;
  };
  const wrong = (await Promise.all(Array.from({ length: 20 }, (_, g) => loop(g)))).flat();
  assert.deepEqual(wrong, []);
  assert.ok(most > 1, 'the calls were never on the wire together');
  assert.ok(most <= 32, `${most} requests on the wire, over the window`);
});

test('a call beyond the window waits; an aborted waiter never goes out', async (t) => {
  const events = [];
  const c = await start(t, { ...home(t, slowPDP('0.2')), maxInFlight: 2, onEvent: (e) => e?.op === 'list' && events.push(e.id) });
  const ac = new AbortController();
  const calls = [c.list(), c.list(), c.list(), c.list({ signal: ac.signal }), c.list()];
  assert.equal(c.inFlight, 2);
  assert.equal(c.waiting, 3);
  ac.abort();
  assert.equal(c.waiting, 2);
  const settled = await Promise.allSettled(calls);
  assert.deepEqual(settled.map((s) => s.status), ['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
  assert.equal(settled[3].reason.name, 'AbortError');
  await c.close();
  // Four lists reached serve, with ids 2 to 5 (1 was the manifest of start).
  assert.deepEqual(events, [2, 3, 4, 5]);
});

test('a call cancelled mid-flight rejects at once; later answers never shift', async (t) => {
  const events = [];
  const c = await start(t, { ...home(t, slowPDP('0.5')), onEvent: (e) => e?.id !== undefined && events.push(e.id) });
  await c.put('arca://app/a', 'va');
  await c.put('arca://app/b', 'vb');
  const ac = new AbortController();
  const cancelled = c.get('arca://app/a', { signal: ac.signal }).then(() => null, (e) => e);
  const timed = c.get('arca://app/a', { timeoutMs: 50 }).then(() => null, (e) => e);
  const later = [c.get('arca://app/b'), c.get('arca://app/a'), c.get('arca://app/b')];
  setTimeout(() => ac.abort(), 50);
  assert.equal((await cancelled)?.name, 'AbortError');
  assert.equal((await timed)?.name, 'TimeoutError');
  // Rejected before serve answered: the PDP still held the first of them,
  // whose event comes before its response.
  assert.equal(events.includes(4), false, 'request 4 was answered before its cancel took effect');
  assert.equal(c.inFlight, 5);
  const values = (await Promise.all(later)).map((g) => g.value.reveal());
  assert.deepEqual(values, ['vb', 'va', 'vb']);
  assert.equal(c.inFlight, 0);
  assert.equal((await c.get('arca://app/a')).value.reveal(), 'va');
});

test('a call with an aborted signal is not sent', async (t) => {
  const c = await start(t, home(t));
  await assert.rejects(c.list({ signal: AbortSignal.abort() }), { name: 'AbortError' });
  assert.equal(c.inFlight, 0);
});

test('a burst larger than the pipe: stdin\'s backpressure is waited out', async (t) => {
  const c = await start(t, home(t));
  await c.put('arca://app/db', 'v');
  // 500 lines of 60 KiB each: 30 MB, many times what a pipe holds.
  const attestation = 'a'.repeat(60 << 10);
  const got = await Promise.all(Array.from({ length: 500 }, () => c.get('arca://app/db', { attestation })));
  assert.equal(got.length, 500);
  assert.ok(got.every((g) => g.value.reveal() === 'v'));
});
