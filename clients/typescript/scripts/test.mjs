// npm test: node's test runner over test/*.test.mjs against one arca binary
// (ARCA_BIN, else built once here for every test file), then tsc over the
// declarations and the example.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { arcaBin } from './arca-bin.mjs';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const env = { ...process.env, ARCA_BIN: arcaBin() };
const files = readdirSync(join(pkg, 'test')).filter((f) => f.endsWith('.test.mjs')).map((f) => join('test', f));

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: pkg, env, stdio: 'inherit' });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

let status = run(process.execPath, ['--test', ...files]);
const tsc = join(pkg, 'node_modules', '.bin', 'tsc');
if (!existsSync(tsc)) {
  console.error('tsc is not installed: run npm ci, then npm test again');
  status ||= 1;
} else {
  console.log('tsc --noEmit -p tsconfig.json');
  status ||= run(tsc, ['--noEmit', '-p', 'tsconfig.json']);
}
process.exit(status);
