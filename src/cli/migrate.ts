import { createLogger } from '../compose.js';
import { loadConfig } from '../config.js';
import { databaseMigrationStatus, migrateDatabase } from '../db/migrate-database.js';
import { adminTarget, statusMessage } from './admin-target.js';

/**
 * `arbor migrate` applies pending migrations; `arbor status` (statusOnly) lists applied and
 * pending ones without changing anything.
 * @throws ConfigError on a bad environment; whatever the database throws.
 */
export async function migrateCommand(statusOnly: boolean): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, config.logFormat);
  const target = {
    url: config.databaseUrl,
    dataDir: config.dataDir,
    pooler: config.databasePooler,
    role: statusOnly ? 'status' : 'migrate',
  };
  if (statusOnly) printStatus(await databaseMigrationStatus(target));
  else {
    const applied = await migrateDatabase(target);
    logger.info({ applied }, applied.length ? 'migrations applied' : 'database is up to date');
  }
}

function printStatus(s: { applied: string[]; pending: string[] }): void {
  process.stdout.write(
    `applied: ${s.applied.join(', ') || '(none)'}\npending: ${s.pending.join(', ') || '(none)'}\n`,
  );
}

/**
 * `arbor status [--api <url>]`: through a server when one is named or runs on the embedded
 * data directory, else from the database directly.
 * @returns the process exit code.
 */
export async function statusCommand(opts: { api?: string }): Promise<number> {
  const target = await adminTarget(opts.api);
  if (target.kind === 'local') {
    await migrateCommand(true);
    return 0;
  }
  const { data, error, response } = await target.client.GET('/admin/v1/status');
  if (!data) {
    process.stderr.write(`arbor: status: ${statusMessage(error, response)}\n`);
    return 1;
  }
  process.stdout.write(`database: ${data.kind} (served by ${target.url})\n`);
  printStatus(data);
  return 0;
}
