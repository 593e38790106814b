// The audit stream: typed events, paired with the responses by id, checked
// for seq and chain; breaks are reported with the event where they are.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ArcaError } from '../src/index.js';
import { MANIFEST, fake, home, start } from './helpers.mjs';

test('the events pair with the responses by id, a failed commit\'s two included', async (t) => {
  const h = home(t);
  const events = [];
  const breaks = [];
  const c = await start(t, { ...h, onEvent: (e, err) => (err ? breaks.push(err) : events.push(e)) });
  await c.put('arca://app/db', 'v1');
  const tmp = join(h.dir, '.local', 'share', 'arca', 'default.vault.tmp');
  mkdirSync(join(tmp, 'x'), { recursive: true });
  await assert.rejects(c.put('arca://app/db', 'v2'), (e) => e instanceof ArcaError && e.code === 'op_error');
  rmSync(tmp, { recursive: true });
  await assert.rejects(c.get('arca://app/missing'), (e) => e.code === 'not_found');
  await c.get('arca://app/db', { actor: 'agent:ci' });
  await c.close();
  assert.deepEqual(breaks, []);
  const byId = new Map();
  for (const e of events) if (e.id !== undefined) byId.set(e.id, [...(byId.get(e.id) ?? []), `${e.event}/${e.outcome}`]);
  // ids: 1 the manifest of start, 2 the put, 3 the failed put, 4 and 5 the gets.
  assert.deepEqual(Object.fromEntries(byId), {
    1: ['manifest/ok'],
    2: ['put/ok'],
    3: ['put/ok', 'error/error'],
    4: ['error/not_found'],
    5: ['get/ok'],
  });
  assert.equal(events.at(0).event, 'start');
  assert.equal(events.at(-1).event, 'stop');
  assert.equal(events.at(-1).message, 'eof');
  assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
  assert.equal(events.find((e) => e.id === 5).actor, 'agent:ci');
  assert.equal(events.find((e) => e.id === 4).code, 'not_found');
});

// A stand-in whose stderr is the given lines, each linked to the one
// before it unless its prev is given.
function stream(t, lines) {
  let link;
  const out = lines.map((l, i) => {
    const e = { v: 1, ts: '2026-12-01T00:00:00.000000000Z', seq: i + 1, event: i === 0 ? 'start' : 'list', source: 'serve', ...l };
    if (i === 0) e.message = 'fake';
    else e.outcome = 'ok';
    if (link && !('prev' in l)) e.prev = link;
    if (e.prev === null) delete e.prev;
    const line = JSON.stringify(e);
    link = createHash('sha256').update(line).digest('hex');
    return line;
  });
  return fake(t, `printf '%s\\n' ${out.map((l) => `'${l}'`).join(' ')} >&2\nread line\necho '${MANIFEST}'\nread line\nexit 0`);
}

async function breaksOf(t, binary) {
  const got = [];
  const c = await start(t, { binary, onEvent: (e, err) => got.push([e?.seq ?? null, err?.reason ?? null]) });
  await c.close();
  return got;
}

test('a whole chain checks', async (t) => {
  assert.deepEqual(await breaksOf(t, stream(t, [{}, {}, {}])), [[1, null], [2, null], [3, null]]);
});

test('a seq gap is reported at the event after it', async (t) => {
  assert.deepEqual(await breaksOf(t, stream(t, [{}, { seq: 3 }, { seq: 4 }])), [[1, null], [3, 'seq'], [4, null]]);
});

test('a broken link is reported where it breaks', async (t) => {
  const wrong = 'f'.repeat(64);
  const got = await breaksOf(t, stream(t, [{}, {}, { prev: wrong }, {}]));
  assert.deepEqual(got, [[1, null], [2, null], [3, 'chain'], [4, null]]);
});

test('a link missing once the stream is chained, and a first event that links to nothing', async (t) => {
  assert.deepEqual(await breaksOf(t, stream(t, [{}, {}, { prev: null }])), [[1, null], [2, null], [3, 'chain']]);
  assert.deepEqual(await breaksOf(t, stream(t, [{ prev: 'a'.repeat(64) }])), [[1, 'chain']]);
});

test('a serve before the chain: no prev is no break, unless the manifest lists audit_chain', async (t) => {
  assert.deepEqual(await breaksOf(t, stream(t, [{}, { prev: null }, { prev: null }])), [[1, null], [2, null], [3, null]]);
  const event = (seq) => JSON.stringify({ v: 1, ts: 'x', seq, event: seq === 1 ? 'start' : 'list', message: 'm', source: 'serve' });
  const manifest = '{"id":1,"ok":true,"result":{"protocol":"arca-serve/1","capabilities":{"audit_chain":{"field":"prev","hash":"sha256"}}}}';
  const binary = fake(t, `echo '${event(1)}' >&2\nread line\necho '${manifest}'\nread line\necho '${event(2)}' >&2\necho '{"id":2,"ok":true,"result":{}}'\nread line\nexit 0`);
  const got = [];
  const c = await start(t, { binary, onEvent: (e, err) => got.push([e?.seq ?? null, err?.reason ?? null]) });
  await c.check();
  await c.close();
  assert.deepEqual(got, [[1, null], [2, 'chain']]);
});

test('a line that is not JSON, and a torn last line', async (t) => {
  const binary = fake(t, `printf '%s\\n' '${JSON.stringify({ v: 1, ts: 'x', seq: 1, event: 'start', message: 'm', source: 'serve' })}' >&2\nread line\necho '${MANIFEST}'\nprintf 'not json\\n{"v":1,"seq"' >&2\nread line\nexit 0`);
  assert.deepEqual(await breaksOf(t, binary), [[1, null], [null, 'not_json'], [null, 'torn']]);
});
