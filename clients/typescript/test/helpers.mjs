// What the tests share: the arca binary, a fresh home with an initialized
// vault and a config file, a started client closed after the test, and
// stand-ins for serve written as shell scripts.

import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../src/index.js';
import { arcaBin } from '../scripts/arca-bin.mjs';

export const bin = arcaBin();

/** A fresh HOME with `arca init` run, and toml as its pinned config file. */
export function home(t, toml = '') {
  const dir = mkdtempSync(join(tmpdir(), 'arca-ts-home-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const environ = { HOME: dir, PATH: process.env.PATH };
  execFileSync(bin, ['init'], { env: environ, stdio: 'ignore' });
  const config = join(dir, 'arca.toml');
  writeFileSync(config, toml, { mode: 0o600 });
  return { binary: bin, config, environ, cwd: dir, dir };
}

/** A client on opts, closed when the test ends. */
export async function start(t, opts) {
  const c = await Client.start(opts);
  t.after(() => c.close().catch(() => {}));
  return c;
}

/** The arca CLI on a home: args, and input on its stdin. */
export function arca(h, args, input = '') {
  return execFileSync(bin, args, { env: h.environ, input, encoding: 'utf8' });
}

/** A config whose PDP takes delay (in seconds) to allow anything. */
export function slowPDP(delay) {
  return `[serve.pdp]\nexec = "sleep ${delay}; echo '{\\"allow\\": true}'"\n`;
}

/** A config whose PDP always answers verdict (a JSON object). */
export function pdp(verdict) {
  return `[serve.pdp]\nexec = "echo '${JSON.stringify(verdict).replaceAll('"', '\\"')}'"\n`;
}

/** A stand-in for serve: a shell script, given as its body. */
export function fake(t, body) {
  const dir = mkdtempSync(join(tmpdir(), 'arca-ts-fake-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'arca');
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** An event line of a stand-in: seq n, the start event when n is 1. */
export const START = '{"v":1,"ts":"2026-12-01T00:00:00.000000000Z","seq":1,"event":"start","message":"fake","source":"serve"}';

/** The manifest answer a stand-in gives to request 1. */
export const MANIFEST = '{"id":1,"ok":true,"result":{"protocol":"arca-serve/1"}}';

/** Settles p, or fails after ms: the bound of "does not hang". */
export function within(ms, p, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still pending after ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
