// Append a line to a secret without losing another writer's change: read,
// write with if_version, and on a ConflictError read again.
// Usage: node cas.mjs REF < LINE; prints the version it wrote.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client, ConflictError, Secret } from '@arca-secrets/client';

/**
 * Write change(value) over ref as of the version read; read again when another writer was first.
 * @param {Client} arca
 * @param {string} ref
 * @param {(value: Secret) => string | Promise<string>} change
 */
export async function update(arca, ref, change, tries = 10) {
  for (let i = 0; i < tries; i++) {
    const got = await arca.get(ref);
    try {
      return await arca.put(ref, await change(got.value), { if_version: got.version });
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err; // else someone wrote ref since the get: change what they wrote
    }
  }
  throw new Error(`${ref} changed under each of ${tries} tries`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const line = readFileSync(0, 'utf8').replace(/\n$/, ''); // a secret: never on the command line
  const arca = await Client.start({
    binary: 'arca',
    config: `${process.env.HOME}/.config/arca/arca.toml`, // pinned: no arca.toml from the directory
    environ: { HOME: process.env.HOME, PATH: process.env.PATH },
  });
  try {
    const put = await update(arca, process.argv[2], (v) => `${v.reveal()}\n${line}`);
    console.log(`version ${put.version}`);
  } finally {
    await arca.close();
  }
}
