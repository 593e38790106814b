// Spawn arca serve, get three secrets into a child's environment, close.
// Usage: node embed.mjs COMMAND [ARG...]; exits with the command's status.
import { spawnSync } from 'node:child_process';
import { Client } from '@arca-secrets/client';

const [cmd, ...args] = process.argv.slice(2);
const arca = await Client.start({
  binary: 'arca',
  // Pin the config, so that serve takes no arca.toml from the directory it runs in.
  config: `${process.env.HOME}/.config/arca/arca.toml`,
  environ: { HOME: process.env.HOME, PATH: process.env.PATH },
});
let secrets;
try {
  secrets = await arca.resolve({ DB_PASSWORD: 'arca://app/db', API_KEY: 'arca://app/api', TOKEN: 'arca://app/token' });
} finally {
  await arca.close();
}
const env = { ...process.env };
for (const [name, secret] of Object.entries(secrets)) env[name] = secret.reveal();
const child = spawnSync(cmd, args, { env, stdio: 'inherit' });
process.exit(child.status ?? 1);
