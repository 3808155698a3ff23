import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { openDatabase } from '../../src/db/connect.js';
import { migrateLatest, migrationStatus } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { ensurePgliteTemplate } from '../../src/db/pglite-template-build.js';
import { templatePath } from '../../src/db/pglite-template.js';

/**
 * The embedded database's build-time template (for a fast first start): a fresh data
 * directory is a copy of a migrated, cleanly closed database instead of an initdb. PGlite by
 * nature, whatever ARBOR_TEST_DB says.
 */
const dirs: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
let templates: string;

test.before(async () => {
  templates = temp('arbor-tpl-');
  const made = await ensurePgliteTemplate(templates);
  if (made !== templatePath(templates)) throw new Error(`template made at ${made}`);
});
test.after.always(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A digest of every file under `dir`: what a copy must leave untouched. */
function digestOf(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else h.update(p).update(readFileSync(p));
    }
  };
  walk(dir);
  return h.digest('hex');
}

test.serial(
  'pglite template: made once; a build with nothing changed writes nothing',
  async (t) => {
    const path = templatePath(templates);
    const before = statSync(path).mtimeMs;
    t.is(await ensurePgliteTemplate(templates), undefined);
    t.is(statSync(path).mtimeMs, before);
    t.deepEqual(readdirSync(templates), [path.slice(templates.length + 1)]);
  },
);

test.serial(
  'pglite template: a fresh data directory starts migrated, keeps its writes, and leaves the template as it was',
  async (t) => {
    const pristine = digestOf(templatePath(templates));
    const dataDir = temp('arbor-tpl-data-');
    const db = await openDatabase({ dataDir, template: templates });
    try {
      // Copied, not initialised: every migration is there before migrating.
      t.deepEqual((await migrationStatus(db.knex)).pending, []);
      t.deepEqual(await migrateLatest(db.knex), []);
      await db
        .knex('groups')
        .insert({ uid: 'a'.repeat(40), name: 'from-template', description: '' });
    } finally {
      await db.close();
    }
    // Reopened: an existing database, the row still there.
    const again = await openDatabase({ dataDir, template: templates });
    try {
      const rows = await again.knex('groups').where({ name: 'from-template' }).select('uid');
      t.is(rows.length, 1);
    } finally {
      await again.close();
    }
    t.is(digestOf(templatePath(templates)), pristine, 'the template changed');
  },
);

test.serial(
  'pglite template: another build’s template is not used (initdb, then every migration)',
  async (t) => {
    const other = temp('arbor-tpl-other-');
    // The same files under another key: what a build with another migration or PGlite left.
    await ensurePgliteTemplate(other);
    renameSync(templatePath(other), join(other, 'another-build'));
    const db = await openDatabase({ dataDir: temp('arbor-tpl-data-'), template: other });
    try {
      t.is((await migrationStatus(db.knex)).pending.length, migrations.length);
    } finally {
      await db.close();
    }
  },
);
