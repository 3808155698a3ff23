import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { loadConfig, type Config } from '../config.js';
import { openDatabase } from '../db/connect.js';
import { lockDataDir } from '../db/data-dir-lock.js';
import { restorePglite } from '../db/pglite-restore.js';
import { adminTarget, statusMessage } from './admin-target.js';
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

/**
 * `arbor backup <file> [--api <url>]`: the embedded database (through the server that owns
 * it, or opened here when none does) with the signing and secret keys of this machine's
 * configuration. Through a remote --api only the database comes: keys never cross the API.
 * @returns the process exit code.
 */
export async function backupCommand(file: string, opts: { api?: string }): Promise<number> {
  const target = await adminTarget(opts.api);
  let dump: Blob;
  let keys: ArchiveFile[] = [];
  if (target.kind === 'api') {
    const { data, error, response } = await target.client.GET('/admin/v1/backup', {
      parseAs: 'blob',
    });
    if (!data) {
      process.stderr.write(`arbor: backup: ${statusMessage(error, response)}\n`);
      return 1;
    }
    dump = data as unknown as Blob;
    // A server found through the data directory's lock shares this machine's key files.
    if (opts.api === undefined && process.env.ARBOR_API_URL === undefined)
      keys = keyFiles(loadConfig());
    else
      process.stderr.write('arbor: backup: keys are not served: back up the key directories too\n');
  } else {
    const { config } = target;
    if (config.databaseUrl !== undefined) {
      process.stderr.write(
        'arbor: backup: DATABASE_URL is PostgreSQL: use pg_dump (see the README)\n',
      );
      return 1;
    }
    const db = await openDatabase({ dataDir: config.dataDir, role: 'backup' });
    try {
      dump = await db.dumpDataDir!();
    } finally {
      await db.close();
    }
    keys = keyFiles(config);
  }
  const manifest = { version: 1, database: 'pglite', createdAt: new Date().toISOString() };
  writeFileSync(
    file,
    writeArchive([
      { name: MANIFEST, data: Buffer.from(JSON.stringify(manifest)) },
      { name: DUMP, data: new Uint8Array(await dump.arrayBuffer()) },
      ...keys,
    ]),
    { mode: 0o600 },
  );
  process.stdout.write(`backup: ${file}: database ${dump.size} bytes, ${keys.length} key files\n`);
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
      writeFileSync(join(dir, name), f.data, { mode: 0o600 });
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
