// The README's Install section, run as written in a fresh project, with
// path/to/arca the repository this package sits in: each way installs a
// package that imports as @arca-secrets/client.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repo = resolve(pkg, '..', '..');

// The ```sh blocks of the README's Install section.
function installBlocks() {
  const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
  const section = readme.split('\n## Install\n')[1]?.split('\n## ')[0];
  assert.ok(section, 'the README has no Install section');
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

test('the README says how to install from the repository, and it works', (t) => {
  const blocks = installBlocks();
  assert.equal(blocks.length, 2);
  for (const block of blocks) {
    assert.doesNotMatch(block, /npm install @arca-secrets/, 'the package is not on the registry');
    const dir = mkdtempSync(join(tmpdir(), 'arca-ts-install-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'package.json'), '{"name":"embedder","version":"1.0.0","type":"module","private":true}\n');
    // Nothing from the registry: the package has no dependencies.
    const env = { ...process.env, npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
    execFileSync('sh', ['-ec', block.replaceAll('path/to/arca', repo)], { cwd: dir, env, stdio: 'pipe' });
    writeFileSync(join(dir, 'main.mjs'), "import { Client, PROTOCOL } from '@arca-secrets/client';\nconsole.log(PROTOCOL, typeof Client.start);\n");
    const out = execFileSync(process.execPath, ['main.mjs'], { cwd: dir, encoding: 'utf8' });
    assert.equal(out, 'arca-serve/1 function\n', block);
  }
});
