import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { writeSecretFile } from '../auth/secret-file.js';
import { parseSecretKeys } from '../auth/secret-keys.js';
import { SECRET_KEY_IDS_HEADER } from '../resources/admin/admin-service.js';
import { loadConfig, type Config } from '../config.js';
import { lockDataDir } from '../db/data-dir-lock.js';
import { dumpPglite } from '../db/pglite-dump.js';
import { restorePglite } from '../db/pglite-restore.js';
import { adminTarget, statusMessage, type AdminTarget } from './admin-target.js';
import { readArchive, writeArchive, type ArchiveFile } from './backup-archive.js';

const DUMP = 'pglite.tar.gz';
const MANIFEST = 'arbor-backup.json';

/** The key directories a backup carries: tokens stay valid and secrets stay readable. */
function keyDirs(config: Readonly<Config>): Array<[prefix: string, dir: string]> {
  return [
    ['keys', config.signingKeysDir],
    ...(config.secretKey === undefined
      ? [['secret-keys', config.secretKeysDir] as [string, string]]
      : []),
  ];
}

function keyFiles(config: Readonly<Config>): ArchiveFile[] {
  const out: ArchiveFile[] = [];
  for (const [prefix, dir] of keyDirs(config)) {
    if (!existsSync(dir)) continue;
    for (const d of readdirSync(dir, { withFileTypes: true })) {
      if (d.isFile())
        out.push({ name: `${prefix}/${d.name}`, data: readFileSync(join(dir, d.name)) });
    }
  }
  return out;
}

/** The key ids of the signing key files among `keys` (each file names its own). */
function signingKids(keys: readonly ArchiveFile[]): string[] {
  return keys
    .filter((f) => f.name.startsWith('keys/') && f.name.endsWith('.jwk.json'))
    .map((f) => {
      try {
        return String((JSON.parse(Buffer.from(f.data).toString('utf8')) as { kid?: unknown }).kid);
      } catch {
        return '';
      }
    });
}

/**
 * Why the sealed secrets of a dump would not open with the secret keys a backup archives
 * (`keys`), or undefined when every one would: each id in `needed` (the server's list of the
 * keys its sealed secrets name; a key's id is a hash of the key) must be the id of an
 * archived `secret-keys/*.secret-key` file, or of a key in this machine's
 * ARBOR_SECRET_KEY (which is not archived: whoever set it keeps it).
 */
function sealedSecretsUnopenable(
  needed: readonly string[],
  keys: readonly ArchiveFile[],
  envKeys: string | undefined,
): string | undefined {
  const held = new Set<string>();
  for (const f of keys) {
    if (!f.name.startsWith('secret-keys/') || !f.name.endsWith('.secret-key')) continue;
    try {
      for (const k of parseSecretKeys(Buffer.from(f.data).toString('utf8').trim())) held.add(k.kid);
    } catch {
      // A malformed file opens nothing.
    }
  }
  if (envKeys !== undefined && envKeys.trim() !== '')
    for (const k of parseSecretKeys(envKeys)) held.add(k.kid);
  const missing = needed.filter((kid) => !held.has(kid));
  if (missing.length === 0) return undefined;
  return (
    `the server's sealed secrets need secret keys this machine does not hold (key ids ` +
    `${missing.join(', ')}): restored, they would not open`
  );
}

/**
 * The key files of this machine's configuration, when they are the server's at `url`: one
 * of their signing keys is among those the server publishes. Else why not (a message).
 */
async function serverKeysHere(
  target: Extract<AdminTarget, { kind: 'api' }>,
): Promise<ArchiveFile[] | string> {
  const config = loadConfig();
  const keys = keyFiles(config);
  const kids = signingKids(keys);
  const dir = config.signingKeysDir;
  if (kids.length === 0) return `no signing key files in ${dir} on this machine`;
  const { data } = await target.client.GET('/.well-known/jwks.json');
  const published = new Set((data?.keys ?? []).map((k) => String(k.kid)));
  if (!kids.some((k) => published.has(k)))
    return `the key files in ${dir} are not those of the server at ${target.url} (none of their key ids is among the keys it publishes)`;
  return keys;
}

/**
 * `arbor backup <file> [--api <url>] [--without-keys]`: the embedded database (through the
 * server that owns it, or opened here when none does) with the signing and secret keys. Keys
 * never cross the API: through a server they are read from this machine's key directories,
 * and only when they are that server's (its published keys say so). A backup without them
 * cannot restore a working server, so it fails unless `--without-keys` says to go on. The
 * file is written 0600 through a fresh temporary file (writeSecretFile).
 * @returns the process exit code.
 */
export async function backupCommand(
  file: string,
  opts: { api?: string; withoutKeys?: boolean },
): Promise<number> {
  const target = await adminTarget(opts.api);
  let dump: Blob;
  let keys: ArchiveFile[] = [];
  let missing: string | undefined;
  if (target.kind === 'api') {
    const { data, error, response } = await target.client.GET('/admin/v1/backup', {
      parseAs: 'blob',
    });
    if (!data) {
      process.stderr.write(`arbor: backup: ${statusMessage(error, response)}\n`);
      return 1;
    }
    dump = data as unknown as Blob;
    if (!opts.withoutKeys) {
      const here = await serverKeysHere(target);
      if (typeof here === 'string') missing = here;
      else {
        keys = here;
        const needed = (response.headers.get(SECRET_KEY_IDS_HEADER) ?? '')
          .split(',')
          .filter((kid) => kid !== '');
        missing = sealedSecretsUnopenable(needed, keys, loadConfig().secretKey);
      }
    }
  } else {
    const { config } = target;
    if (config.databaseUrl !== undefined) {
      process.stderr.write(
        'arbor: backup: DATABASE_URL is PostgreSQL: use pg_dump (see the README)\n',
      );
      return 1;
    }
    if (!opts.withoutKeys) {
      keys = keyFiles(config);
      if (signingKids(keys).length === 0)
        missing = `no signing key files in ${config.signingKeysDir}`;
    }
    if (missing === undefined) dump = await dumpPglite(config.dataDir);
  }
  if (missing !== undefined) {
    process.stderr.write(
      `arbor: backup: ${missing}: a backup without the keys cannot restore a working server ` +
        "(tokens would not verify, sealed secrets would not open); run it where the server's " +
        'key directories are (DATA_DIR, ARBOR_SIGNING_KEYS_DIR), or pass --without-keys and ' +
        'back up the keys yourself\n',
    );
    return 1;
  }
  const manifest = { version: 1, database: 'pglite', createdAt: new Date().toISOString() };
  writeSecretFile(
    file,
    writeArchive([
      { name: MANIFEST, data: Buffer.from(JSON.stringify(manifest)) },
      { name: DUMP, data: new Uint8Array(await dump!.arrayBuffer()) },
      ...keys,
    ]),
  );
  process.stdout.write(
    `backup: ${file}: database ${dump!.size} bytes, ${keys.length} key files` +
      `${opts.withoutKeys ? ' (--without-keys)' : ''}\n`,
  );
  return 0;
}

/**
 * `arbor restore <file> [--force]`: into the configured data directory, with no server on it
 * (the directory is locked meanwhile). Key files are written where they are missing; one
 * that differs from the backup's is replaced only with --force.
 * @returns the process exit code.
 */
export async function restoreCommand(file: string, opts: { force?: boolean }): Promise<number> {
  const config = loadConfig();
  if (config.databaseUrl !== undefined) {
    process.stderr.write('arbor: restore: DATABASE_URL is PostgreSQL: use pg_restore\n');
    return 1;
  }
  const files = readArchive(readFileSync(file));
  const dump = files.find((f) => f.name === DUMP);
  if (!files.some((f) => f.name === MANIFEST) || !dump) {
    process.stderr.write(`arbor: restore: ${file} is not an arbor backup\n`);
    return 1;
  }
  const lock = lockDataDir(config.dataDir, { role: 'restore' });
  try {
    const dirs = new Map(keyDirs(config));
    for (const f of files) {
      const [prefix, name] = f.name.split('/', 2);
      const dir = prefix === undefined ? undefined : dirs.get(prefix);
      if (!dir || !name || name !== basename(name)) continue;
      const path = join(dir, name);
      if (existsSync(path) && !readFileSync(path).equals(f.data) && !opts.force) {
        process.stderr.write(`arbor: restore: ${path} differs from the backup: pass --force\n`);
        return 1;
      }
    }
    let aside: string | undefined;
    try {
      aside = await restorePglite(lock, config.dataDir, new Blob([dump.data]), opts.force === true);
    } catch (e) {
      process.stderr.write(`arbor: restore: ${(e as Error).message}\n`);
      return 1;
    }
    let written = 0;
    for (const f of files) {
      const [prefix, name] = f.name.split('/', 2);
      const dir = prefix === undefined ? undefined : dirs.get(prefix);
      if (!dir || !name || name !== basename(name)) continue;
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeSecretFile(join(dir, name), f.data);
      written++;
    }
    process.stdout.write(
      `restored ${file} into ${config.dataDir} (${written} key files)` +
        `${aside ? `; the previous database is in ${aside}` : ''}\n`,
    );
    return 0;
  } finally {
    lock.release();
  }
}
