// Spawning serve: readiness from the start event, and every way a start
// fails, each with its own clear error.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '../src/index.js';
import { MANIFEST, START, bin, fake, home, start, within } from './helpers.mjs';

test('start waits for the start event, then asks the manifest', async (t) => {
  const events = [];
  const c = await start(t, { ...home(t), onEvent: (e, err) => events.push([e, err]) });
  assert.ok(Number.isInteger(c.pid));
  assert.equal(events[0][0].event, 'start');
  assert.equal(events[0][1], null);
  // The manifest of start is request 1, and it was answered before start
  // resolved: its event is on stderr before its response on stdout.
  assert.equal(events[1][0].op, 'manifest');
  assert.equal(events[1][0].id, 1);
  assert.deepEqual(await c.close(), { code: 0, signal: null });
});

test('serve gets the args, the working directory and only the environment given', async (t) => {
  const h = home(t);
  const out = join(h.dir, 'seen');
  // A stand-in that notes what it was given, with shell builtins only.
  const binary = fake(t, `{ echo "args: $*"; echo "cwd: $(pwd)"; export -p; } > '${out}'\necho '${START}' >&2\nread line\necho '${MANIFEST}'\nread line\nexit 0`);
  process.env.ARCA_TS_LEAK = 'leaked';
  t.after(() => delete process.env.ARCA_TS_LEAK);
  const c = await start(t, { binary, config: '/etc/arca.toml', env: 'dev', cwd: h.dir, environ: { HOME: h.dir, X_GIVEN: 'yes' } });
  await c.close();
  let seen = readFileSync(out, 'utf8');
  assert.match(seen, /^args: serve --config \/etc\/arca.toml --env dev$/m);
  assert.match(seen, new RegExp(`^cwd: ${h.dir}$`, 'm'));
  assert.match(seen, /X_GIVEN=.?yes/);
  assert.match(seen, /HOME=/);
  assert.doesNotMatch(seen, /ARCA_TS_LEAK|PATH=/);
  // No environ: serve gets nothing at all from this process.
  const d = await start(t, { binary });
  await d.close();
  seen = readFileSync(out, 'utf8');
  assert.match(seen, /^args: serve$/m);
  assert.doesNotMatch(seen, /ARCA_TS_LEAK|PATH=|HOME=|X_GIVEN/);
});

test('a config that cannot start rejects with serve\'s own stop message', async (t) => {
  const h = home(t);
  const err = await Client.start({ ...h, config: join(h.dir, 'missing.toml') }).then(() => null, (e) => e);
  assert.ok(err instanceof Error);
  assert.match(err.message, /cannot start: config .*missing\.toml.* does not exist/);
});

test('a binary that is not there rejects', async (t) => {
  const h = home(t);
  const err = await Client.start({ ...h, binary: join(h.dir, 'no-such-arca') }).then(() => null, (e) => e);
  assert.match(err.message, /cannot spawn .*no-such-arca.*ENOENT/);
});

test('a serve whose stderr closes before its start event rejects', async (t) => {
  const binary = fake(t, 'exec 2>&-\nsleep 0.2\nexit 3');
  const err = await Client.start({ binary }).then(() => null, (e) => e);
  assert.match(err.message, /ended before its start event \(its stderr closed\); exit status 3$/);
});

test('a serve that writes something else first rejects, quoting it', async (t) => {
  const binary = fake(t, 'echo "arca: flag provided but not defined: -verbose" >&2\nexit 2');
  const err = await Client.start({ binary }).then(() => null, (e) => e);
  assert.match(err.message, /wrote "arca: flag provided but not defined: -verbose" before its start event/);
});

test('a serve that is not ready in time is killed', async (t) => {
  const binary = fake(t, 'exec sleep 30');
  // Killed, not waited for: it would sleep 30 s.
  const err = await within(5000, Client.start({ binary, startTimeoutMs: 300 }).then(() => null, (e) => e), 'start');
  assert.match(err.message, /not ready after 300 ms/);
});

test('an abort signal abandons the start', async (t) => {
  const binary = fake(t, 'exec sleep 30');
  const ac = new AbortController();
  setTimeout(() => ac.abort(new Error('given up')), 100);
  const err = await within(5000, Client.start({ binary, signal: ac.signal }).then(() => null, (e) => e), 'start');
  assert.equal(err.message, 'given up');
});

test('a serve of another protocol is refused', async (t) => {
  const binary = fake(t, `echo '${START}' >&2\nread line\necho '{"id":1,"ok":true,"result":{"protocol":"arca-serve/2"}}'\nread line\nexit 0`);
  const err = await Client.start({ binary }).then(() => null, (e) => e);
  assert.match(err.message, /speaks "arca-serve\/2", this client arca-serve\/1/);
});

test('a stand-in that speaks the protocol starts: the check is the manifest', async (t) => {
  const binary = fake(t, `echo '${START}' >&2\nread line\necho '${MANIFEST}'\nread line\nexit 0`);
  const c = await start(t, { binary });
  assert.deepEqual(await c.close(), { code: 0, signal: null });
});

test('maxInFlight must be a positive integer, checked before spawning', async () => {
  await assert.rejects(Client.start({ binary: bin, maxInFlight: 0 }), RangeError);
});
