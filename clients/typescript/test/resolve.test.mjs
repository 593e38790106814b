// resolve names the variable and the ref whose get failed, as the Go
// client does, and keeps the error's class, code and policy.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ArcaError, ClosedError } from '../src/index.js';
import { arca, home, pdp, start } from './helpers.mjs';

const failure = (p) => p.then(() => assert.fail('succeeded'), (e) => e);

test('a failed resolve names the variable and its ref', async (t) => {
  const h = home(t);
  arca(h, ['--config', h.config, 'put', 'arca://app/db'], 'v4lue');
  const c = await start(t, h);
  const err = await failure(c.resolve({ A: 'arca://app/db', B: 'arca://app/missing' }));
  assert.ok(err instanceof ArcaError, `${err}`);
  assert.equal(err.code, 'not_found');
  assert.equal(err.message, 'B (arca://app/missing): arca://app/missing not found in env "default"');
  assert.equal(err.variable, 'B');
  assert.equal(err.ref, 'arca://app/missing');
  assert.ok(err.cause instanceof ArcaError);
  assert.equal(err.cause.message, 'arca://app/missing not found in env "default"');

  const bad = await failure(c.resolve({ DB_PASSWORD: 'arca://app/db', TOKEN: 'not a ref' }));
  assert.ok(bad instanceof ArcaError, `${bad}`);
  assert.equal(bad.code, 'bad_request');
  assert.match(bad.message, /^TOKEN \(not a ref\): invalid ref/);

  const notString = await failure(c.resolve({ N: 42 }));
  assert.ok(notString instanceof TypeError, `${notString}`);
  assert.match(notString.message, /^N \(number\): /);

  await c.close();
  const closed = await failure(c.resolve({ A: 'arca://app/db' }));
  assert.ok(closed instanceof ClosedError, `${closed}`);
  assert.equal(closed.code, 'closed');
  assert.match(closed.message, /^A \(arca:\/\/app\/db\): /);
});

test('a denied resolve keeps the verdict', async (t) => {
  const h = home(t, pdp({ allow: false, reason: 'not on shift' }));
  const c = await start(t, h);
  const err = await failure(c.resolve({ API_KEY: 'arca://app/api' }));
  assert.ok(err instanceof ArcaError, `${err}`);
  assert.equal(err.code, 'denied');
  assert.match(err.message, /^API_KEY \(arca:\/\/app\/api\): /);
  assert.equal(err.policy.allow, false);
  assert.equal(err.policy.reason, 'not on shift');
});
