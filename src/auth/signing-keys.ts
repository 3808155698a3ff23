import { createPrivateKey, type JsonWebKeyInput, type KeyObject } from 'node:crypto';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeSecretFile } from './secret-file.js';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';

export const SIGNING_ALG = 'ES256';

export interface SigningKey {
  kid: string;
  createdAt: number;
  /** A KeyObject, not a CryptoKey: compact-jws.ts signs with node:crypto's one-shot sign. */
  privateKey: KeyObject;
  publicJwk: JWK;
}

interface StoredKey {
  kid: string;
  createdAt: number;
  jwk: JWK;
}

/**
 * Arbor's token-signing keys: every `*.jwk.json` in a directory (one private JWK each).
 * The newest signs; all are published, so a new key can be added (rotation) without
 * invalidating tokens signed by the old one. An empty directory gets a fresh key, which
 * is what makes `npm start` work on a bare machine.
 */
export async function loadSigningKeys(dir: string, now = Date.now()): Promise<SigningKey[]> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let files = (await readdir(dir)).filter((f) => f.endsWith('.jwk.json'));
  if (files.length === 0) {
    await generateSigningKey(dir, now);
    files = (await readdir(dir)).filter((f) => f.endsWith('.jwk.json'));
  }
  const keys: SigningKey[] = [];
  for (const f of files) {
    const stored = JSON.parse(await readFile(join(dir, f), 'utf8')) as StoredKey;
    if (!stored.jwk?.d || stored.jwk.kty !== 'EC' || stored.jwk.crv !== 'P-256')
      throw new Error(`${f}: not a private P-256 signing key`);
    const privateKey = createPrivateKey({
      key: stored.jwk as JsonWebKeyInput['key'],
      format: 'jwk',
    });
    const { d: _d, ...pub } = stored.jwk;
    keys.push({
      kid: stored.kid,
      createdAt: stored.createdAt,
      privateKey,
      publicJwk: { ...pub, kid: stored.kid, alg: SIGNING_ALG, use: 'sig' },
    });
  }
  return keys.sort((a, b) => b.createdAt - a.createdAt);
}

/** Write a new ES256 key into `dir`; it becomes the signing key on the next load. */
export async function generateSigningKey(dir: string, now = Date.now()): Promise<string> {
  const { privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  const stored: StoredKey = { kid, createdAt: now, jwk };
  writeSecretFile(join(dir, `${now}-${kid.slice(0, 8)}.jwk.json`), JSON.stringify(stored));
  return kid;
}
