// Compiled by tsc in npm test, never run: the declarations say what the
// client does, and refuse what it does not take.
import { ArcaError, Client, PROTOCOL, Secret, type Event, type GetResult } from '@arca-secrets/client';

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
  const exit = await c.close();
  return [p, text, version, rotated, caps, first, env.A.reveal(), exit.code, status, ct, out, cut, base].join();
}

export function onEvent(e: Event | null): string | undefined {
  return e?.event === 'start' ? e.message : e?.outcome;
}
