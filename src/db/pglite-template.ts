import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrations } from './migrations/index.js';

/**
 * A fresh embedded database, made once at build time so a first start is fast. PGlite's
 * initdb runs PostgreSQL's bootstrap in WebAssembly: 3.7–4.1 s of CPU on the development
 * machine, most of a fresh data directory's time to ready, and the migrations another
 * 0.55 s. `npm run build` runs initdb and every migration once and keeps the cleanly closed
 * data directory; a fresh data directory is then a copy of its files, PostgreSQL opens it
 * as an existing database (0.37 s of CPU), and migrating finds nothing to do. (PGlite's own
 * `loadDataDir` from a tarball took 1.5 s of CPU: it writes each file through emscripten's
 * file system.) An existing data directory never touches it.
 *
 * The template is named by a key of the PGlite version and the migrations' names and code,
 * so a build with another PGlite or another migration never loads a stale one (it is not
 * found, and initdb runs as before). It holds nothing secret: the schema, the built-in
 * roles and the migration log; keys live in files beside the database, made on first start.
 */

/** Where templates are kept: dist/pglite-template/ next to dist/src/ (not in src/ runs). */
export const TEMPLATE_DIR = fileURLToPath(new URL('../../pglite-template/', import.meta.url));

function pgliteVersion(): string {
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'));
  // …/node_modules/@electric-sql/pglite/dist/index.js → its package.json
  const pkg = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** The name a template for this PGlite and these migrations has. */
export function templateKey(): string {
  const h = createHash('sha256').update(`pglite ${pgliteVersion()}\n`);
  for (const [name, m] of migrations)
    h.update(`${name}\n${m.up.toString()}\n${m.down.toString()}\n`);
  return h.digest('hex').slice(0, 24);
}

/** The template directory for this build, whether or not it exists. */
export function templatePath(dir = TEMPLATE_DIR): string {
  return join(dir, templateKey());
}

/**
 * Make `target` (an empty directory) this build's fresh database, by copying the template's
 * files. @returns false when this build has no template (the caller runs initdb).
 */
export function copyTemplate(target: string, dir: string = TEMPLATE_DIR): boolean {
  const from = templatePath(dir);
  if (!existsSync(join(from, 'PG_VERSION'))) return false;
  cpSync(from, target, { recursive: true });
  return true;
}
