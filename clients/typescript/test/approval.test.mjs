// Approvals and grants: approval_required as an ApprovalRequiredError,
// withApproval against a stand-in (its clock a fake one: no test sleeps)
// and a real serve, the new ops' lines, a value dropped at expires_at.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { ApprovalDeniedError, ApprovalRequiredError, ArcaError, ExpiredError, Secret } from '../src/index.js';
import { shapeResult } from '../src/wire.js';
import { MANIFEST, START, fake, home, start } from './helpers.mjs';

const ID = 'ap_2e2e07a12d71a020ed599842a201b06d';
const APPROVAL = { id: ID, summary: 'a caller that names no actor asks to get app/db in env default', fingerprint: '4553c33cc7709cb9af3514ab7ab5bb5f8699bd0971eb149e0f2998dd840c8108', expires_at: '2099-01-01T00:15:00.000000000Z', url: `http://127.0.0.1:7777/approvals/${ID}` };
const ASKED = JSON.stringify({ ok: false, error: { code: 'approval_required', message: `approval required: ${APPROVAL.summary}`, details: { approval: APPROVAL } }, policy: { allow: false, reason: 'prod', obligations: ['arca:approval'] } }).slice(1);
const GOT = '"ok":true,"result":{"ref":"arca://app/db","env":"default","value":"s3cret","version":1,"created_at":"2026-11-30T08:14:14.381353202Z","updated_at":"2026-11-30T08:14:14.381353202Z"}}';

// A stand-in for serve: a get without an approval is answered
// approval_required, one with it succeeds; each approval op gets the next
// state of the file states; every other op an empty result. Each request
// line is appended to the file requests.
function approvalServe(t, states) {
  const binary = fake(t, `echo '${START}' >&2
read line
echo '${MANIFEST}'
while IFS= read -r line; do
  printf '%s\\n' "$line" >> requests
  id=$(printf '%s' "$line" | sed 's/^{"id":\\([0-9]*\\),.*/\\1/')
  case "$line" in
  *'"op":"approval"'*)
    state=$(head -n 1 states); tail -n +2 states > states.next; mv states.next states
    printf '{"id":%s,"ok":true,"result":{"approval":"${ID}","state":"%s"}}\\n' "$id" "$state" ;;
  *'"op":"get"'*'"approval":'*) printf '{"id":%s,%s\\n' "$id" '${GOT}' ;;
  *'"op":"get"'*) printf '{"id":%s,%s\\n' "$id" '${ASKED}' ;;
  *) printf '{"id":%s,"ok":true,"result":{}}\\n' "$id" ;;
  esac
done`);
  const dir = dirname(binary);
  writeFileSync(join(dir, 'states'), states.map((s) => `${s}\n`).join(''));
  const requests = () => readFileSync(join(dir, 'requests'), 'utf8').trim().split('\n').map((l) => l.slice(l.indexOf('"op"')));
  return { binary, cwd: dir, requests };
}

// A clock whose sleeps move it on at once, recording each.
function fakeClock(t0) {
  const clock = { now: t0, sleeps: [] };
  clock.options = (intervalMs) => ({
    intervalMs,
    now: () => clock.now,
    sleep: async (ms) => {
      clock.sleeps.push(ms);
      clock.now += ms;
    },
  });
  return clock;
}

const T0 = Date.parse('2099-01-01T00:00:00Z');
const get = (c) => (approval) => c.get('arca://app/db', { approval });

test('approval_required is an ApprovalRequiredError carrying the approval', async (t) => {
  const s = approvalServe(t, []);
  const c = await start(t, { binary: s.binary, cwd: s.cwd });
  const err = await c.get('arca://app/db').then(() => null, (e) => e);
  assert.ok(err instanceof ApprovalRequiredError);
  assert.ok(err instanceof ArcaError);
  assert.equal(err.code, 'approval_required');
  assert.equal(err.message, `approval required: ${APPROVAL.summary}`);
  assert.deepEqual(err.policy, { allow: false, reason: 'prod', obligations: ['arca:approval'] });
  assert.deepEqual({ ...err.approval, expires_at: err.approval.expires_at.toISOString() }, { ...APPROVAL, expires_at: '2099-01-01T00:15:00.000Z' });
});

test('withApproval polls until approved, then retries with the approval', async (t) => {
  const s = approvalServe(t, ['pending', 'approved']);
  const c = await start(t, { binary: s.binary, cwd: s.cwd });
  const clock = fakeClock(T0);
  const g = await c.withApproval(get(c), clock.options(undefined));
  assert.equal(g.value.reveal(), 's3cret');
  const ap = `"approval":"${ID}"`;
  assert.deepEqual(s.requests(), ['"op":"get","ref":"arca://app/db"}', `"op":"approval",${ap}}`, `"op":"approval",${ap}}`, `"op":"get","ref":"arca://app/db",${ap}}`]);
  assert.deepEqual(clock.sleeps, [1000]); // the default interval
});

for (const state of ['denied', 'expired']) {
  test(`withApproval gives up on an approval ${state}`, async (t) => {
    const s = approvalServe(t, ['pending', state]);
    const c = await start(t, { binary: s.binary, cwd: s.cwd });
    const err = await c.withApproval(get(c), fakeClock(T0).options(60_000)).then(() => null, (e) => e);
    assert.ok(err instanceof ApprovalDeniedError, String(err));
    assert.equal(err.state, state);
    assert.equal(err.approval.id, ID);
    assert.equal(s.requests().length, 3); // no retry
  });
}

test('withApproval waits no longer than the approval\'s expires_at', async (t) => {
  const s = approvalServe(t, Array(8).fill('pending'));
  const c = await start(t, { binary: s.binary, cwd: s.cwd });
  const clock = fakeClock(T0);
  const err = await c.withApproval(get(c), clock.options(240_000)).then(() => null, (e) => e);
  assert.ok(err instanceof ApprovalDeniedError);
  assert.equal(err.state, 'expired');
  assert.deepEqual(clock.sleeps, [240_000, 240_000, 240_000, 180_000]);
});

test('withApproval gives up at the deadline, and on the signal', async (t) => {
  const s = approvalServe(t, Array(8).fill('pending'));
  const c = await start(t, { binary: s.binary, cwd: s.cwd });
  const clock = fakeClock(T0);
  const err = await c.withApproval(get(c), { ...clock.options(1000), deadline: new Date(T0 + 2500) }).then(() => null, (e) => e);
  assert.equal(err?.name, 'TimeoutError');
  assert.deepEqual(clock.sleeps, [1000, 1000, 500]);
  const ac = new AbortController();
  const aborted = await c.withApproval(get(c), { ...clock.options(1000), signal: ac.signal, sleep: async () => ac.abort(new Error('enough')) }).then(() => null, (e) => e);
  assert.equal(aborted?.message, 'enough');
});

test('the new ops send what the schema says: scope an object of integers', async (t) => {
  const s = approvalServe(t, ['approved']);
  const c = await start(t, { binary: s.binary, cwd: s.cwd });
  await c.approve(ID, 'grant', 'human:ana', { scope: { uses: 5, ttl_s: 600 } });
  await c.approve(ID, 'deny', 'human:ana', { scope: { uses: 1 } });
  await c.revoke({ all: true });
  await c.revoke({ grant: 'gr_1' });
  await c.revoke({ ref: 'arca://app/db' });
  await c.approval(ID);
  assert.deepEqual(s.requests(), [
    `"op":"approve","approval":"${ID}","decision":"grant","approver":"human:ana","scope":{"ttl_s":600,"uses":5}}`,
    `"op":"approve","approval":"${ID}","decision":"deny","approver":"human:ana","scope":{"uses":1}}`,
    '"op":"revoke","all":true}',
    '"op":"revoke","grant":"gr_1"}',
    '"op":"revoke","ref":"arca://app/db"}',
    `"op":"approval","approval":"${ID}"}`,
  ]);
  await assert.rejects(c.approve(ID, 'grant', 'h', { scope: { uses: '5' } }), /each entry of scope must be an integer/);
  await assert.rejects(c.approve(ID, 'grant', 'h', { scope: [5] }), /scope must be an object/);
});

test('a value got under a grant is dropped at expires_at', () => {
  let now = Date.parse('2026-11-30T08:24:14.380Z');
  const r = shapeResult({ ref: 'arca://app/db', value: 's3cret', expires_at: '2026-11-30T08:24:14.381353202Z' }, undefined, () => now);
  assert.equal(r.value.expiresAt.toISOString(), '2026-11-30T08:24:14.381Z');
  assert.equal(r.value.reveal(), 's3cret');
  now += 1;
  assert.throws(() => r.value.reveal(), ExpiredError);
  now -= 1000; // dropped: a clock turned back does not bring it back
  assert.throws(() => r.value.reveal(), ExpiredError);
  const open = shapeResult({ ref: 'arca://app/db', value: 's3cret' }, undefined, () => Infinity);
  assert.equal(open.value.reveal(), 's3cret');
  assert.equal(open.value.expiresAt, undefined);
  assert.equal(new Secret('x').expiresAt, undefined);
});

// A PDP that allows a put and asks a human for a get; once one approved it
// allows it, for 60 seconds.
const approvalPDP = `[serve.pdp]\nexec = "jq -c 'if .op == \\"put\\" then {allow: true} elif .approval.state == \\"approved\\" then {allow: true, obligations: [\\"arca:ttl=60\\"]} else {allow: false, reason: \\"prod\\", obligations: [\\"arca:approval\\"]} end'"\n`;

test('against a real serve: asked, approved by the host, retried under a grant', async (t) => {
  const c = await start(t, home(t, approvalPDP));
  await c.put('arca://app/db', 's3cret');
  const asked = await c.get('arca://app/db').then(() => null, (e) => e);
  assert.ok(asked instanceof ApprovalRequiredError, String(asked));
  const { id } = asked.approval;
  // Identical requests while it is pending share it: the host approves it
  // while withApproval waits.
  const got = await c.withApproval(get(c), { sleep: () => c.approve(id, 'grant', 'human:test', { scope: { uses: 2 } }) });
  assert.equal(got.value.reveal(), 's3cret');
  assert.ok(got.value.expiresAt instanceof Date);
  assert.equal(got.value.expiresAt.getTime(), Date.parse(got.expires_at));
  const s = await c.approval(id);
  assert.equal(s.state, 'approved');
  assert.equal(s.approver, 'human:test');
  assert.deepEqual(s.scope, { uses: 2 });
  assert.deepEqual(await c.revoke({ ref: 'arca://app/db' }), { revoked: 1 });
});
