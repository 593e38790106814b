// A canary value goes through every path a value takes, and every way a
// call fails: it never shows in an error, an inspect, a JSON or an event.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { format, inspect } from 'node:util';
import { Secret } from '../src/index.js';
import { MANIFEST, START, fake, home, start } from './helpers.mjs';

const CANARY = 'canary-7f3a9c1e-d0d0';

// Every way a thing can be printed, shown or serialised.
function shown(x) {
  const out = [inspect(x), inspect(x, { showHidden: true, depth: Infinity, getters: true }), format('%s %o %O %j', x, x, x, x)];
  try {
    out.push(JSON.stringify(x));
  } catch {}
  if (x instanceof Error) out.push(String(x), x.message, x.stack ?? '', inspect(x.cause));
  else out.push(String(x));
  return out.join('\n');
}

function clean(x, what) {
  assert.equal(shown(x).includes(CANARY), false, `the canary shows in ${what}`);
}

const failure = (p) => p.then(() => assert.fail('succeeded'), (e) => e);

test('a Secret prints as <redacted> wherever it goes', () => {
  const s = new Secret(CANARY);
  assert.equal(s.reveal(), CANARY);
  assert.equal(`${s}`, '<redacted>');
  assert.equal(s + '', '<redacted>');
  assert.equal(JSON.stringify({ s }), '{"s":"<redacted>"}');
  assert.equal(inspect({ s }), '{ s: <redacted> }');
  assert.deepEqual(Object.keys(s), []);
  assert.equal(structuredClone(s).reveal, undefined, 'a clone holds nothing');
  clean(s, 'a Secret');
});

test('the canary through every op and every failure', async (t) => {
  const events = [];
  const c = await start(t, { ...home(t), onEvent: (e, err) => events.push(JSON.stringify(e), String(err)) });
  clean(await c.put('arca://app/db', CANARY), 'the result of put');
  const g = await c.get('arca://app/db');
  assert.equal(g.value.reveal(), CANARY);
  clean(g, 'the result of get');
  clean(await c.rotate('arca://app/db', new Secret(CANARY + '2')), 'the result of rotate');
  clean(await c.list(), 'the result of list');
  clean(await c.resolve({ A: 'arca://app/db' }), 'the result of resolve');
  const earlier = await c.get('arca://app/db', { version: 1 });
  assert.equal(earlier.value.reveal(), CANARY);
  clean(earlier, 'the result of get of an earlier version');
  const { cursor } = await c.changes();
  clean(await c.history('arca://app/db'), 'the result of history');
  clean(await c.rollback('arca://app/db', 1), 'the result of rollback');
  clean(await c.rm('arca://app/db'), 'the result of rm');
  clean(await c.list({ deleted: true }), 'the result of list of the deleted');
  clean(await c.undelete('arca://app/db'), 'the result of undelete');
  clean(await c.changes({ since: cursor }), 'the result of changes');
  clean(await c.destroy('arca://app/db', { versions: [2] }), 'the result of destroy');
  const errors = [
    await failure(c.put('arca://app/db', CANARY, { if_version: 1 })), // a conflict
    await failure(c.rollback('arca://app/db', 2)), // destroyed
    await failure(c.put('arca://bad ref', CANARY)),
    await failure(c.put('arca://app/db', CANARY.repeat(4000))), // over 64 KiB
    await failure(c.put('arca://app/db', CANARY + '\ud800')),
    await failure(c.rotate('arca://app/missing', CANARY)),
    await failure(c.put('arca://app/db', CANARY, { env: 'nope' })),
    await failure(c.put('arca://app/db', CANARY.repeat(300000))), // over the line cap
    await failure(c.resolve({ A: 'arca://app/db', B: 'arca://app/missing' })),
    await failure(c.call('export', { value: CANARY })),
  ];
  for (const [i, err] of errors.entries()) clean(err, `error ${i}`);
  await c.close();
  assert.ok(events.length > 10);
  assert.equal(events.join('\n').includes(CANARY), false, 'the canary is on the audit stream');
  clean(c, 'the client');
});

test('the canary in a line the client cannot pair is never quoted', async (t) => {
  const value = `{"id":5,"ok":true,"result":{"value":"${CANARY}"}}`;
  const binary = fake(t, `echo '${START}' >&2\nread line\necho '${MANIFEST}'\nread line\necho '${CANARY} not json'\nread line\necho '${value}'\nread line\nexit 0`);
  const c = await start(t, { binary });
  clean(await failure(c.get('arca://app/db')), 'a response that is not JSON');
  clean(await failure(c.get('arca://app/db')), 'a response out of step');
});
