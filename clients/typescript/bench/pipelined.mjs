// npm run bench: pipelined gets through the client, from 64 concurrent
// callers, beside the raw pipe in the same run: serve spawned the same way,
// a burst of get lines written while the responses are read, stderr
// drained. Several rounds of each; prints req/s and the ratio client/raw.
//
//   ARCA_BIN=/path/to/arca npm run bench [-- ROUNDS [REQUESTS]]

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../src/index.js';
import { arcaBin } from '../scripts/arca-bin.mjs';

const rounds = Number(process.argv[2] ?? 5);
const requests = Number(process.argv[3] ?? 20_000);
const callers = 64;
const binary = arcaBin();
const dir = mkdtempSync(join(tmpdir(), 'arca-bench-'));
const environ = { HOME: dir, PATH: '/usr/bin:/bin' };
execFileSync(binary, ['init'], { env: environ, stdio: 'ignore' });
execFileSync(binary, ['put', 'arca://app/db'], { env: environ, input: 's3cret-value-of-some-length-0123456789', stdio: ['pipe', 'ignore', 'ignore'] });

async function viaClient() {
  const c = await Client.start({ binary, environ, cwd: dir });
  const per = Math.ceil(requests / callers);
  const began = process.hrtime.bigint();
  await Promise.all(Array.from({ length: callers }, async () => {
    for (let i = 0; i < per; i++) await c.get('arca://app/db');
  }));
  const s = Number(process.hrtime.bigint() - began) / 1e9;
  await c.close();
  return (per * callers) / s;
}

async function viaPipe() {
  const child = spawn(binary, ['serve'], { env: environ, cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr.resume();
  await new Promise((resolve) => child.stderr.once('data', resolve)); // the start event
  const line = '{"id":1,"op":"get","ref":"arca://app/db"}\n';
  const burst = line.repeat(1000);
  let seen = 0;
  const began = process.hrtime.bigint();
  const done = new Promise((resolve) => {
    child.stdout.on('data', (chunk) => {
      for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) seen++;
      if (seen >= requests) resolve();
    });
  });
  for (let n = requests; n > 0; n -= 1000) {
    if (!child.stdin.write(n >= 1000 ? burst : line.repeat(n))) await new Promise((r) => child.stdin.once('drain', r));
  }
  await done;
  const s = Number(process.hrtime.bigint() - began) / 1e9;
  child.stdin.end();
  await new Promise((r) => child.once('close', r));
  return requests / s;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const client = [];
const raw = [];
console.log(`${rounds} rounds of ${requests} gets; the client with ${callers} concurrent callers`);
for (let r = 1; r <= rounds; r++) {
  raw.push(await viaPipe());
  client.push(await viaClient());
  console.log(`round ${r}: raw ${raw.at(-1).toFixed(0)} req/s, client ${client.at(-1).toFixed(0)} req/s, ratio ${(client.at(-1) / raw.at(-1)).toFixed(2)}`);
}
// The ratio of each round, raw and client run back to back, is steadier
// than the ratio of the medians on a machine that is busy with other work.
const ratios = client.map((c, i) => c / raw[i]);
console.log(`median: raw ${median(raw).toFixed(0)} req/s, client ${median(client).toFixed(0)} req/s, ratio client/raw ${median(ratios).toFixed(2)} (median of the rounds' ratios)`);
rmSync(dir, { recursive: true, force: true });
