#!/usr/bin/env node
import { compose, createLogger } from './compose.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/connect.js';
import { migrateLatest, migrationStatus } from './db/migrate.js';
import { authLoginCommand } from './cli/auth-login.js';
import { importAdvisoriesCommand } from './cli/import-advisories.js';
import { createListener } from './grpc/listener.js';

const USAGE = `usage: arbor <command>

commands:
  serve      serve the API, the STS and OIDC discovery (applies pending migrations)
  migrate    apply pending database migrations and exit
  status     show applied and pending migrations
  reconcile  sync Group/Identity/RoleBinding custom resources from Kubernetes (KUBECONFIG or in-cluster)
  auth login log in (browser OIDC + PKCE, or an ID token) and print an API token
  import-advisories <path>  import OSV advisory files (a .json file or a directory)
`;

async function serve(): Promise<void> {
  const config = loadConfig();
  const arbor = await compose(config);
  const { logger } = arbor;
  const server = createListener(arbor).listen(config.port, config.host);
  // Keep-alive sockets would hold shutdown open; bound how long they may idle.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  logger.info(
    {
      port: config.port,
      database: arbor.db.kind,
      issuer: config.issuerUrl,
      adminToken: config.adminToken !== undefined,
    },
    'arbor serving',
  );
  if (config.adminToken === undefined) {
    logger.warn('ARBOR_ADMIN_TOKEN is not set: only API tokens from the STS are accepted');
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      logger.warn('in-flight requests did not finish in 10 s; closing anyway');
      server.closeAllConnections();
    }, 10_000);
    force.unref();
    server.close(() => {
      void arbor.close().then(() => {
        logger.info('stopped');
        process.exit(0);
      });
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

async function migrate(statusOnly: boolean): Promise<void> {
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

async function main(argv: string[]): Promise<void> {
  const [command] = argv;
  switch (command) {
    case 'serve':
      return serve();
    case 'migrate':
      return migrate(false);
    case 'status':
      return migrate(true);
    case 'import-advisories':
      process.exitCode = await importAdvisoriesCommand(argv.slice(1));
      return;
    case 'auth':
      if (argv[1] !== 'login') {
        process.stderr.write('usage: arbor auth login --help\n');
        process.exitCode = 2;
        return;
      }
      process.exitCode = await authLoginCommand(argv.slice(2));
      return;
    case 'reconcile':
      // Loaded on demand: the API server need not load the Kubernetes client.
      return (await import('./reconciler/command.js')).reconcileCommand();
    // @commands (one case per admin command)
    case undefined:
    case 'help':
    case '--help':
      process.stdout.write(USAGE);
      return;
    default:
      process.stderr.write(`arbor: unknown command "${command}"\n${USAGE}`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((e: unknown) => {
  if (e instanceof ConfigError) process.stderr.write(`arbor: configuration: ${e.message}\n`);
  else process.stderr.write(`arbor: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
