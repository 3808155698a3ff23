import { openDatabase, type DatabaseOptions } from './connect.js';
import { migrateLatest, migrationStatus } from './migrate.js';

/**
 * `arbor migrate`'s database work: opens the database, applies every pending migration and
 * closes it, so that the CLI never holds a Knex of its own (only db/ talks to the database).
 * @returns the names of the migrations applied, oldest first (empty when up to date).
 * @throws whatever opening the database or a migration throws (DataDirBusyError on a
 *   data directory another process holds).
 */
export async function migrateDatabase(opts: DatabaseOptions): Promise<string[]> {
  const db = await openDatabase(opts);
  try {
    return await migrateLatest(db.knex);
  } finally {
    await db.close();
  }
}

/**
 * `arbor status`'s database work: opens the database, lists its applied and pending
 * migrations without changing anything, and closes it.
 * @throws whatever opening or reading the database throws.
 */
export async function databaseMigrationStatus(
  opts: DatabaseOptions,
): Promise<{ applied: string[]; pending: string[] }> {
  const db = await openDatabase(opts);
  try {
    return await migrationStatus(db.knex);
  } finally {
    await db.close();
  }
}
