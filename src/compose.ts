import type Koa from 'koa';
import { pino, type Logger } from 'pino';
import { createApp } from './api/app.js';
import { Authorizer, NO_GRANTS } from './auth/authorizer.js';
import { ChainAuthenticator, type Authenticator } from './auth/authenticator.js';
import type { Config } from './config.js';
import { PageTokenCodec } from './core/page-token.js';
import { openDatabase, type Database } from './db/connect.js';
import { migrateLatest } from './db/migrate.js';
import { serverSecret } from './db/secrets.js';
import { KnexGroupStore } from './db/stores/group-store.js';
import { KnexPinger } from './db/stores/ping-store.js';
import { KnexUnitOfWork } from './db/unit-of-work.js';
import { GroupService } from './resources/groups/group-service.js';
import { HealthService } from './resources/health-service.js';
import { ListPager } from './resources/list-pager.js';
import type { Services } from './services.js';
// @compose-imports

export interface Arbor {
  config: Readonly<Config>;
  db: Database;
  services: Services;
  authz: Authorizer;
  authenticator: Authenticator;
  logger: Logger;
  app: Koa;
  close(): Promise<void>;
}

export interface ComposeOptions {
  /** Use this database instead of opening the configured one (tests). */
  database?: Database;
  logger?: Logger;
  /** Apply pending migrations first (default true). */
  migrate?: boolean;
}

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'arbor' }, timestamp: pino.stdTimeFunctions.isoTime });
}

/** The one place that wires database → stores → services → front door. */
export async function compose(config: Readonly<Config>, opts: ComposeOptions = {}): Promise<Arbor> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const db =
    opts.database ?? (await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir }));
  try {
    if (opts.migrate !== false) {
      const applied = await migrateLatest(db.knex);
      if (applied.length > 0) logger.info({ applied }, 'migrations applied');
    }
    const codec = new PageTokenCodec(await serverSecret(db.knex, 'page-token'));
    const uow = new KnexUnitOfWork(db.knex);
    const pager = new ListPager(codec);
    const authz = new Authorizer(NO_GRANTS);
    const services: Services = {
      health: new HealthService(uow, new KnexPinger()),
      groups: new GroupService({ uow, groups: new KnexGroupStore(), authz, pager }),
      // @services (one entry per service; keep construction to one line where you can)
    };
    const authenticator = new ChainAuthenticator(config.adminToken, undefined);
    const app = createApp({ services, authenticator, logger, bodyLimit: config.maxBodyBytes });
    return {
      config,
      db,
      services,
      authz,
      authenticator,
      logger,
      app,
      close: () => db.close(),
    };
  } catch (e) {
    if (!opts.database) await db.close();
    throw e;
  }
}
