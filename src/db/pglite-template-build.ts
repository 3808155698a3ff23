import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from './connect.js';
import { migrateLatest } from './migrate.js';
import { TEMPLATE_DIR, templatePath } from './pglite-template.js';

/**
 * Make this build's embedded-database template (pglite-template.ts) unless it exists, so a
 * build with nothing changed writes nothing: a fresh PGlite database with every migration
 * applied, cleanly closed, as its directory of files. Copied under a temporary name and
 * renamed, so a reader never sees half of it; templates of other builds are removed.
 * @returns the directory written, or undefined when it was there already.
 */
export async function ensurePgliteTemplate(dir = TEMPLATE_DIR): Promise<string | undefined> {
  const target = templatePath(dir);
  if (existsSync(target)) return undefined;
  mkdirSync(dir, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), 'arbor-pglite-template-'));
  try {
    // Its own data directory, so no template is copied into it: initdb, then migrate.
    const db = await openDatabase({ dataDir: work, template: false });
    try {
      await migrateLatest(db.knex);
    } finally {
      // A clean shutdown: the files are a consistent cluster to copy.
      await db.close();
    }
    const partial = `${target}.${process.pid}.partial`;
    cpSync(join(work, 'pglite'), partial, { recursive: true });
    renameSync(partial, target);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  for (const f of readdirSync(dir))
    if (join(dir, f) !== target) rmSync(join(dir, f), { recursive: true, force: true });
  return target;
}
