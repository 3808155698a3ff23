import { openDatabase } from './connect.js';

/**
 * `arbor backup`'s database work: opens the embedded database in `dataDir` (taking its lock
 * as `backup`), dumps its data directory as a gzipped tarball and closes it.
 * @throws DataDirBusyError when another process holds the data directory; whatever PGlite
 *   throws while dumping.
 */
export async function dumpPglite(dataDir: string): Promise<Blob> {
  const db = await openDatabase({ dataDir, role: 'backup' });
  try {
    return await db.dumpDataDir!();
  } finally {
    await db.close();
  }
}
