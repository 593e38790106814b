// Compiled by tsc in npm test, never run: the declarations say what the
// client does, and refuse what it does not take.
import { ApprovalDeniedError, ApprovalRequiredError, ArcaError, Client, ConflictError, ExpiredError, PROTOCOL, Secret, type Event, type GetResult, type HistoryResult } from '@arca-secrets/client';

export async function typed(c: Client): Promise<string> {
  const p: 'arca-serve/1' = PROTOCOL;
  const g: GetResult = await c.get('arca://app/db', { actor: 'agent:ci', timeoutMs: 100 });
  const text: string = g.value.reveal();
  const version: number = g.version;
  const rotated: string | undefined = g.rotated_at;
  // @ts-expect-error a value is a Secret, not a string
  g.value.toUpperCase();
  // @ts-expect-error put needs a value
  await c.put('arca://app/db');
  await c.put('arca://app/db', new Secret('x'));
  const m = await c.manifest();
  const caps: Record<string, unknown> | undefined = m.capabilities?.audit_chain;
  const l = await c.list({ env: 'dev' });
  const first: string | undefined = l.records[0]?.ref;
  const env: Record<'A' | 'B', Secret> = await c.resolve({ A: 'arca://a/b', B: 'arca://c/d' });
  try {
    await c.rm('arca://app/db', { signal: AbortSignal.timeout(10) });
  } catch (e) {
    if (e instanceof ArcaError && e.code === 'denied') return e.policy?.reason ?? '';
  }
  const h = await c.http('echo', 'GET', '/user', { query: { q: ['1', '2'], r: 'x' }, headers: { 'X-Test': 'y' } });
  const status: number = h.status;
  const ct: string[] | undefined = h.headers['Content-Type'];
  // @ts-expect-error headers are strings
  await c.http('echo', 'GET', '/', { headers: { 'X-N': 1 } });
  const x = await c.exec('migrate', { args: ['--dry-run'] });
  const out: string = x.stdout;
  const cut: boolean = x.truncated.stderr;
  // @ts-expect-error args are an array
  await c.exec('migrate', { args: '--dry-run' });
  const px = await c.proxy({ services: ['echo'] });
  const base: string | undefined = px.base_urls?.echo;
  try {
    await c.http('echo', 'GET', '/');
  } catch (e) {
    if (e instanceof ArcaError && e.code === 'upstream_failed') return e.details?.cause ?? '';
  }
  const approved: GetResult = await c.withApproval((approval) => c.get('arca://app/db', { approval }), { intervalMs: 500, deadline: new Date() });
  const decided = await c.approve('ap_0', 'grant', 'human:ana', { scope: { uses: 5, ttl_s: 600 } });
  const state: 'pending' | 'approved' | 'denied' | 'expired' = decided.state;
  // @ts-expect-error a decision is grant or deny
  await c.approve('ap_0', 'maybe', 'human:ana');
  // @ts-expect-error a scope is uses and ttl_s, integers
  await c.approve('ap_0', 'grant', 'human:ana', { scope: { uses: '5' } });
  const revoked: number = (await c.revoke({ all: true })).revoked;
  const until: Date | undefined = approved.value.expiresAt;
  try {
    await c.get('arca://app/db');
  } catch (e) {
    if (e instanceof ApprovalRequiredError) return `${e.approval.id} ${e.approval.expires_at.toISOString()} ${e.approval.url ?? ''}`;
    if (e instanceof ApprovalDeniedError) return e.state;
    if (e instanceof ExpiredError) return e.code;
  }
  const earlier: GetResult = await c.get('arca://app/db', { version: 1 });
  // @ts-expect-error a version is a number
  await c.get('arca://app/db', { version: '1' });
  const hist: HistoryResult = await c.history('arca://app/db');
  const current: number | null = hist.current;
  const states: Array<'current' | 'previous' | 'deleted'> = hist.versions.map((v) => v.state);
  // @ts-expect-error history holds no value
  hist.versions[0].value;
  const back: number = (await c.rollback('arca://app/db', 1, { if_version: 2 })).rolled_back_from;
  const undeleted: true = (await c.undelete('arca://app/db')).undeleted;
  const destroyed: number[] = (await c.destroy('arca://app/db', { versions: [1, 2] })).destroyed;
  // @ts-expect-error versions are numbers
  await c.destroy('arca://app/db', { versions: ['1'] });
  const ch = await c.changes({ since: 'cursor' });
  const next: string = ch.cursor;
  const deletedAt: string | undefined = (await c.list({ deleted: true })).records[0]?.deleted_at;
  try {
    await c.put('arca://app/db', 'x', { if_version: earlier.version });
  } catch (e) {
    if (e instanceof ConflictError) return String(e.currentVersion);
  }
  const exit = await c.close();
  return [p, text, version, rotated, caps, first, env.A.reveal(), exit.code, status, ct, out, cut, base, state, revoked, until,
    current, states, back, undeleted, destroyed, next, deletedAt].join();
}

export function onEvent(e: Event | null): string | undefined {
  return e?.event === 'start' ? e.message : e?.outcome;
}
