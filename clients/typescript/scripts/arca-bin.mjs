// The arca binary that tests, the generator and the benchmark run: $ARCA_BIN,
// else one built from this repository (go build at its root) into a
// temporary directory, once per process, removed when the process exits.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root: clients/typescript/scripts/../../.. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

let built;

export function arcaBin() {
  if (process.env.ARCA_BIN) return resolve(process.env.ARCA_BIN);
  if (built) return built;
  if (!existsSync(join(repoRoot, 'go.mod'))) {
    throw new Error(`ARCA_BIN is unset and ${repoRoot} holds no go.mod to build arca from`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'arca-ts-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const out = join(dir, 'arca');
  execFileSync('go', ['build', '-o', out, './cmd/arca'], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
  built = out;
  return out;
}
