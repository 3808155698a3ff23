import { createLogger } from '../compose.js';
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/connect.js';
import { migrateLatest, migrationStatus } from '../db/migrate.js';

/**
 * `arbor migrate` applies pending migrations; `arbor status` (statusOnly) lists applied and
 * pending ones without changing anything.
 * @throws ConfigError on a bad environment; whatever the database throws.
 */
export async function migrateCommand(statusOnly: boolean): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const db = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir });
  try {
    if (statusOnly) {
      const s = await migrationStatus(db.knex);
      process.stdout.write(
        `applied: ${s.applied.join(', ') || '(none)'}\npending: ${s.pending.join(', ') || '(none)'}\n`,
      );
    } else {
      const applied = await migrateLatest(db.knex);
      logger.info({ applied }, applied.length ? 'migrations applied' : 'database is up to date');
    }
  } finally {
    await db.close();
  }
}
