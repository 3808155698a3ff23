import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeSecretFile } from './secret-file.js';
import { secretKeyId, type SecretKey } from './secret-box.js';

/**
 * Parse `ARBOR_SECRET_KEY`: one or more base64 (or base64url) 32-byte keys separated by
 * commas. The first seals; the rest only open (the keys being rotated out).
 *
 * @throws Error naming the position of a key that is not 32 bytes of base64.
 */
export function parseSecretKeys(raw: string): SecretKey[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((text, i) => {
      const key = Buffer.from(text, 'base64');
      if (key.length !== 32 || !/^[A-Za-z0-9+/_-]+=*$/.test(text)) {
        throw new Error(`ARBOR_SECRET_KEY: key ${i + 1} must be 32 bytes in base64`);
      }
      return { kid: secretKeyId(key), key };
    });
}

/**
 * The keys that seal secrets at rest. From `ARBOR_SECRET_KEY` when set (what several
 * replicas sharing a PostgreSQL must use: each must hold the same keys); otherwise every
 * `*.secret-key` file in `dir`, newest first, one generated when there is none (like the
 * signing keys), so `npm start` works on a bare machine.
 *
 * @throws Error for a malformed key.
 */
export async function loadSecretKeys(
  envValue: string | undefined,
  dir: string,
  now = Date.now(),
): Promise<SecretKey[]> {
  if (envValue !== undefined && envValue.trim() !== '') return parseSecretKeys(envValue);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let files = (await readdir(dir)).filter((f) => f.endsWith('.secret-key'));
  if (files.length === 0) {
    await generateSecretKey(dir, now);
    files = (await readdir(dir)).filter((f) => f.endsWith('.secret-key'));
  }
  // File names start with the creation time in milliseconds: newest first seals.
  files.sort((a, b) => Number.parseInt(b, 10) - Number.parseInt(a, 10));
  const keys: SecretKey[] = [];
  for (const f of files) {
    const [parsed] = parseSecretKeys((await readFile(join(dir, f), 'utf8')).trim());
    if (!parsed) throw new Error(`${f}: empty secret key file`);
    keys.push(parsed);
  }
  return keys;
}

/** Write a new random key into `dir`; it seals from the next start on. @returns its id. */
export async function generateSecretKey(dir: string, now = Date.now()): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  const kid = secretKeyId(key);
  writeSecretFile(join(dir, `${now}-${kid}.secret-key`), `${key.toString('base64')}\n`);
  return kid;
}
