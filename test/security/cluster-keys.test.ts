import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { pino } from 'pino';
import { loadSecretKeys } from '../../src/auth/secret-keys.js';
import { loadSigningKeys } from '../../src/auth/signing-keys.js';
import { loadConfig } from '../../src/config.js';
import { prepareOnce } from '../../src/serve-cluster.js';
import { freshDatabase } from '../helpers/db.js';

// Workers started together must not each generate a secret key (one
// would seal client secrets the others cannot open). The primary prepares every generated
// key before any worker composes; workers then only read them.
test('cluster: the primary prepares the signing and secret keys once, before the workers', async (t) => {
  const db = await freshDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-cluster-keys-'));
  t.teardown(async () => {
    await db.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  // PGlite: the primary opens the embedded database in DATA_DIR, as `arbor serve` does.
  const config = loadConfig({ DATA_DIR: dataDir, ...(db.url ? { DATABASE_URL: db.url } : {}) });
  await prepareOnce(config, pino({ level: 'silent' }));
  const secretFiles = readdirSync(config.secretKeysDir).filter((f) => f.endsWith('.secret-key'));
  t.is(secretFiles.length, 1, 'the primary generated the secret key');
  t.is(readdirSync(config.signingKeysDir).filter((f) => f.endsWith('.jwk.json')).length, 1);

  // Workers composing at once all find those keys and generate none.
  const [secret, signing] = await Promise.all([
    Promise.all([1, 2, 3].map(() => loadSecretKeys(undefined, config.secretKeysDir))),
    Promise.all([1, 2, 3].map(() => loadSigningKeys(config.signingKeysDir))),
  ]);
  t.is(new Set(secret.map((keys) => keys[0]!.kid)).size, 1);
  t.is(new Set(signing.map((keys) => keys[0]!.kid)).size, 1);
  t.deepEqual(
    readdirSync(config.secretKeysDir).filter((f) => f.endsWith('.secret-key')),
    secretFiles,
  );
});
