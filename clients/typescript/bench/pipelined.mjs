// npm run bench: pipelined gets through the client, from 64 concurrent
// callers, beside the raw pipe in the same run: serve spawned the same way,
// a burst of get lines written while the responses are read, stderr
// drained. Several rounds of each; prints req/s and the ratio client/raw.
// A third turn, window, keeps that raw pipe at 64 requests in flight (as
// many lines written as a chunk of stdout answered): what 64 callers can
// ask of serve with no client between, the floor of client/raw. The raw
// turns do what the client must and no more: each line has an id of its
// own and each response is matched to its request by the id it echoes.
// ARCA_BENCH_DEEP=1 adds a turn, deep: the client with 256 callers, as
// many as its window (maxInFlight) holds. On Linux the benchmark also
// prints what a get cost both sides in each turn, serve's CPU time and this process's,
// and the raw turn's cost over each turn's: the ratio of the rates when
// the machine's cores are all taken, which its other work sways less.
// ARCA_CLIENT_BEFORE, the path of another tree's src/index.js, times that
// client too, in the same rounds (a before and after in one run).
//
//   ARCA_BIN=/path/to/arca npm run bench [-- ROUNDS [REQUESTS]]

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
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

// This process's CPU time per get of each client turn, in µs: the client's
// own cost, which a busy machine sways less than the rates.
const cpu = {};
// Both sides' CPU time per get of each turn, serve's and this process's, in
// µs (Linux only): what a get costs the machine, the rate a turn allows
// when the cores are all taken.
const cost = {};

// serveCPU is the CPU time process pid has run, every thread's, in µs, from
// /proc/PID/task/*/schedstat; 0 where there is none.
function serveCPU(pid) {
  try {
    let ns = 0;
    for (const t of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    return ns / 1000;
  } catch {
    return 0;
  }
}

// costed runs turn, and notes in cost[name] the CPU time a get of n gets
// both sides spent: this process's and serve's (pid).
async function costed(name, pid, n, turn) {
  const used = process.cpuUsage();
  const served = serveCPU(pid);
  const out = await turn();
  const { user, system } = process.cpuUsage(used);
  const serve = serveCPU(pid) - served;
  if (served > 0) (cost[name] ??= []).push((user + system + serve) / n);
  return { out, own: (user + system) / n };
}

async function viaClient(C = Client, name = 'client', many = callers) {
  const c = await C.start({ binary, environ, cwd: dir });
  const per = Math.ceil(requests / many);
  const { out: s, own } = await costed(name, c.pid, per * many, async () => {
    const began = process.hrtime.bigint();
    await Promise.all(Array.from({ length: many }, async () => {
      for (let i = 0; i < per; i++) await c.get('arca://app/db');
    }));
    return Number(process.hrtime.bigint() - began) / 1e9;
  });
  (cpu[name] ??= []).push(own);
  await c.close();
  return (per * many) / s;
}

// lines is k get lines with the ids after first, each its own.
function lines(first, k) {
  let s = '';
  for (let id = first + 1; id <= first + k; id++) s += '{"id":' + id + ',"op":"get","ref":"arca://app/db"}\n';
  return s;
}

// viaPipe writes bursts of 1,000 lines; with window, it keeps window lines
// in flight instead. It does what the client must and no more: each line
// has an id of its own, and each response is matched to its request by
// the id it echoes (the digits after `{"id":`, compared as a number).
async function viaPipe(window = 0) {
  const child = spawn(binary, ['serve'], { env: environ, cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr.resume();
  await new Promise((resolve) => child.stderr.once('data', resolve)); // the start event
  const { out: s } = await costed(window > 0 ? 'window' : 'raw', child.pid, requests, async () => {
    let seen = 0;
    let sent = window > 0 ? Math.min(window, requests) : 0;
    const began = process.hrtime.bigint();
    let carry = false; // the chunk before ended inside a line
    const done = new Promise((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        let at = 0;
        for (let i = chunk.indexOf(10); i >= 0; at = i + 1, i = chunk.indexOf(10, at)) {
          seen++;
          if (at === 0 && carry) continue; // begun in the chunk before: counted, its id not read
          let id = 0;
          for (let j = at + 6; j < i && chunk[j] >= 48 && chunk[j] <= 57; j++) id = id * 10 + chunk[j] - 48;
          if (id !== seen) reject(new Error(`response ${seen} carries id ${id}`));
        }
        carry = at < chunk.length;
        if (seen >= requests) resolve();
        else if (window > 0 && sent < requests) {
          const k = Math.min(seen + window - sent, requests - sent);
          child.stdin.write(lines(sent, k));
          sent += k;
        }
      });
    });
    if (window > 0) child.stdin.write(lines(0, sent));
    for (let n = window > 0 ? 0 : requests; n > 0; n -= 1000) {
      if (!child.stdin.write(lines(requests - n, Math.min(n, 1000)))) await new Promise((r) => child.stdin.once('drain', r));
    }
    await done;
    return Number(process.hrtime.bigint() - began) / 1e9;
  });
  child.stdin.end();
  await new Promise((r) => child.once('close', r));
  return requests / s;
}

const Before = process.env.ARCA_CLIENT_BEFORE ? (await import(process.env.ARCA_CLIENT_BEFORE)).Client : null;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const turns = { raw: () => viaPipe(), window: () => viaPipe(callers), client: () => viaClient() };
// deep: the client with as many callers as its window holds (maxInFlight, 256).
if (process.env.ARCA_BENCH_DEEP) turns.deep = () => viaClient(Client, 'deep', 256);
if (Before) turns.before = () => viaClient(Before, 'before');
const got = Object.fromEntries(Object.keys(turns).map((k) => [k, []]));
console.log(`${rounds} rounds of ${requests} gets; the client with ${callers} concurrent callers`);
for (let r = 1; r <= rounds; r++) {
  // The clients' turns swap places each round: neither always follows the raw turns.
  const clients = Object.keys(turns).slice(2);
  for (const k of ['raw', 'window', ...(r % 2 ? clients : clients.reverse())]) got[k].push(await turns[k]());
  const say = Object.keys(turns).slice(1).map((k) => `${k} ${got[k].at(-1).toFixed(0)} req/s (${(got[k].at(-1) / got.raw.at(-1)).toFixed(2)})`);
  console.log(`round ${r}: raw ${got.raw.at(-1).toFixed(0)} req/s, ${say.join(', ')}`);
}
// The ratio of each round, raw and client run back to back, is steadier
// than the ratio of the medians on a machine that is busy with other work.
for (const k of Object.keys(turns).slice(1)) {
  const ratios = got[k].map((x, i) => x / got.raw[i]).sort((a, b) => a - b);
  const own = cpu[k] ? `; ${median(cpu[k]).toFixed(2)} µs of CPU a get here (median)` : '';
  console.log(`${k}: median ${median(got[k]).toFixed(0)} req/s, ${k}/raw ${median(ratios).toFixed(2)} (median of the rounds' ratios; ${ratios[0].toFixed(2)} to ${ratios.at(-1).toFixed(2)})${own}`);
}
// The cost of a get to both sides, and each turn's against the raw turn's
// of its round: the ratio of the rates when the machine's cores are taken.
if (cost.raw?.length === rounds) {
  for (const k of Object.keys(turns)) {
    if (cost[k]?.length !== rounds) continue;
    const ratios = cost.raw.map((x, i) => x / cost[k][i]).sort((a, b) => a - b);
    console.log(`${k}: ${median(cost[k]).toFixed(2)} µs of CPU a get, serve's and this process's (median); raw-cost/${k}-cost ${median(ratios).toFixed(2)} (${ratios[0].toFixed(2)} to ${ratios.at(-1).toFixed(2)})`);
  }
}
rmSync(dir, { recursive: true, force: true });
