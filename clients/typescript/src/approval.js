// Waiting for a human's decision on an approval, then retrying the request
// it was asked for (SPEC §14): the approval op polled until the state is
// no longer pending, bounded by the approval's expiry and the caller's.

import { setTimeout as delay } from 'node:timers/promises';
import { ApprovalDeniedError, ApprovalRequiredError } from './errors.js';

/**
 * Runs call(undefined); on an ApprovalRequiredError polls client.approval
 * every intervalMs (1000 by default) until the approval is decided, for no
 * longer than its expires_at, deadline (a Date or ms since the epoch, read
 * on now) and signal allow. Approved, it runs call(id) once more and
 * returns what that returns; denied or expired, it throws
 * ApprovalDeniedError. Any other error is thrown as it is. now and sleep
 * are the clock, for a test.
 * @template T
 * @param {import('./client.js').Client} client
 * @param {(approval: string | undefined) => Promise<T>} call
 * @returns {Promise<T>}
 */
export async function withApproval(client, call, options = {}) {
  let asked;
  try {
    return await call(undefined);
  } catch (err) {
    if (!(err instanceof ApprovalRequiredError)) throw err;
    asked = err.approval;
  }
  await decided(client, asked, options);
  return call(asked.id);
}

const sleepFor = (ms, signal) => delay(ms, undefined, { signal });

async function decided(client, a, { intervalMs = 1000, deadline, signal, now = Date.now, sleep = sleepFor }) {
  if (!(intervalMs > 0)) throw new RangeError('intervalMs must be a positive number');
  const until = deadline === undefined ? Infinity : +deadline;
  for (;;) {
    signal?.throwIfAborted();
    const s = await client.approval(a.id, { signal });
    if (s.state === 'approved') return;
    if (s.state !== 'pending') throw new ApprovalDeniedError(a, s.state);
    const t = now();
    const end = typeof s.expires_at === 'string' ? Date.parse(s.expires_at) : a.expires_at.getTime();
    if (t >= end) throw new ApprovalDeniedError(a, 'expired');
    if (t >= until) throw new DOMException(`approval ${a.id} was not decided by the deadline`, 'TimeoutError');
    await sleep(Math.min(intervalMs, end - t, until - t), signal);
  }
}
