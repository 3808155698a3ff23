import { existsSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { DataDirLock } from './data-dir-lock.js';

/**
 * Make `dataDir`'s embedded database the one in `dump` (a `dumpDataDir` tarball). The caller
 * holds the directory's lock. An existing database is moved aside (to `pglite.replaced-<time>`)
 * only when `replace` is set.
 * @returns where the replaced database went, if there was one.
 * @throws Error when there is a database and `replace` is not set, or the dump does not load.
 */
export async function restorePglite(
  _lock: DataDirLock,
  dataDir: string,
  dump: Blob,
  replace: boolean,
): Promise<string | undefined> {
  const dir = join(dataDir, 'pglite');
  let aside: string | undefined;
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    if (!replace) {
      throw new Error(`${dataDir} has a database already: pass --force to replace it`);
    }
    aside = `${dir}.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    renameSync(dir, aside);
  }
  const pglite = await PGlite.create({ dataDir: dir, loadDataDir: dump });
  // A query proves the copy opens; closing writes it out.
  await pglite.query('SELECT 1');
  await pglite.close();
  return aside;
}
