import type Koa from 'koa';
import type { Logger } from 'pino';
import { createApp } from './api/app.js';
import type { FastReads, NodeHandler } from './api/fast-reads.js';
import { loadConsoleAssets } from './api/console-static.js';
import type { OpenApiDocument } from './api/openapi/document.js';
import { mountLoginRoute } from './api/routes/login-routes.js';
import { mountRegistryAuthRoutes } from './api/routes/registry-auth-routes.js';
import { mountStsRoutes } from './api/routes/sts-routes.js';
import { mountOAuthRoutes } from './api/routes/oauth-routes.js';
import { mountTokenSessionRoutes } from './api/routes/token-session-routes.js';
import type { Authorizer } from './auth/authorizer.js';
import type { Authenticator } from './auth/authenticator.js';
import type { TrustedIssuerKeys } from './auth/remote-key-sets.js';
import type { SignInToken } from './auth/sign-in-token.js';
import { TOKEN_USE, type TokenIssuer } from './auth/token-issuer.js';
import { UsageRecorder } from './auth/usage-recorder.js';
import type { Config } from './config.js';
import { PageTokenCodec } from './core/page-token.js';
import { budgetLimiters } from './db/budget-store.js';
import { Budgets } from './budgets.js';
import { openDatabase, type Database } from './db/connect.js';
import type { DataDirLock } from './db/data-dir-lock.js';
import { migrateLatest } from './db/migrate.js';
import { observeQueries, poolStats, traceQueries } from './db/query-observer.js';
import type { ReadCacheStats } from './db/read-cache.js';
import { serverSecret } from './db/secrets.js';
import { KnexGrantSource } from './db/stores/grant-source.js';
import { createStores } from './db/stores/index.js';
import { KnexUnitOfWork } from './db/unit-of-work.js';
import { createLogger } from './logger.js';
import { tracingOn } from './tracing/spans.js';
import { ApiMetrics } from './metrics/api-metrics.js';
import { HttpSinkTransport } from './outbound/http-sink-transport.js';
import { readCachesOf } from './read-caches.js';
import {
  RememberedSelfChecks,
  type CheckCache,
} from './resources/access/remembered-self-checks.js';
import { AuditLog, NO_AUDIT } from './resources/audit/audit-log.js';
import { enableConsistencyScopes } from './resources/consistency.js';
import { DeliveryWorker } from './resources/events/delivery-worker.js';
import type { SinkTransport } from './resources/events/sink-transport.js';
import { ListPager } from './resources/list-pager.js';
import { BindingExpirySweeper } from './resources/role-bindings/binding-expiry-sweeper.js';
import type { SecurityTokenService } from './resources/sts/security-token-service.js';
import { UsageFlusher } from './resources/usage/usage-flusher.js';
import { CoarseClock } from './core/coarse-clock.js';
import {
  serviceLayer,
  type AllServices,
  type ServiceFoundation,
  type ServiceLayer,
} from './service-layer.js';
import { resourcePresenter } from './wire/resource-presenter.js';
import { KINDS, type FeatureMounts } from './features.js';
// @compose-imports

export interface Arbor {
  config: Readonly<Config>;
  db: Database;
  services: AllServices;
  /** What the doors mount of the features (src/features.ts). */
  features: FeatureMounts;
  authz: Authorizer;
  authenticator: Authenticator;
  tokens: TokenIssuer;
  sts: SecurityTokenService;
  logger: Logger;
  app: Koa;
  /** The OpenAPI document of `app` (served at `/openapi.json`). */
  openapi: OpenApiDocument;
  /** The REST door as a node:http handler: the fast reads, then `app` (serve this, not `app`). */
  rest: NodeHandler;
  /** The hot reads `rest` serves outside Koa (absent when they are off). */
  fastReads: FastReads | undefined;
  /** Prometheus metrics of this instance (served on METRICS_PORT by `arbor serve`). */
  metrics: ApiMetrics;
  /** Delivers queued events to subscription sinks; `arbor serve` starts it. */
  delivery: DeliveryWorker;
  /** Deletes role bindings past expiry and retention; `arbor serve` starts it. */
  bindingSweeper: BindingExpirySweeper;
  /**
   * Writes recorded last-used times every ARBOR_LAST_USED_FLUSH_MS; `arbor serve` starts it,
   * `close()` writes what is left. Undefined when ARBOR_LAST_USED=false.
   */
  usage: { recorder: UsageRecorder; flusher: UsageFlusher } | undefined;
  /** The token endpoint's service (docs/oauth.md): the gRPC TokenService calls it too. */
  oauth: ServiceLayer['oauth'];
  /** `arbor auth sessions` (docs/oauth.md). */
  sessions: ServiceLayer['sessions'];
  /** Writes the issued-token record every second; `arbor serve` starts it. */
  issuedTokens: ServiceLayer['issuedTokens'];
  /** The read caches' counters, by cache (empty when the cache is off). */
  readCaches: Readonly<Record<string, ReadCacheStats>>;
  close(): Promise<void>;
}

export interface ComposeOptions {
  /** Use this database instead of opening the configured one (tests). */
  database?: Database;
  /** PGlite: the data directory lock this process holds already (`arbor serve`). */
  dataDirLock?: DataDirLock;
  /** PGlite: who opens the data directory, as its lock names it (default `command`). */
  role?: string;
  logger?: Logger;
  /** Apply pending migrations first (default true). */
  migrate?: boolean;
  /** Issuer keys trusted without discovery (the cluster's service-account keys). */
  trustedKeys?: TrustedIssuerKeys;
  /** Register metrics here instead of a fresh registry (the reconciler shares its own). */
  metrics?: ApiMetrics;
  /** false: services record no audit trail and queue no events (NO_AUDIT: the benchmark's baseline). */
  audit?: boolean;
  /** How event deliveries leave the process (default: HTTP with the address policy). */
  sinkTransport?: SinkTransport;
  /** false: every REST request goes through Koa (tests comparing it with the fast reads). */
  fastReads?: boolean;
  /** A development run's sign-in token, accepted as the bootstrap admin (cli/serve.ts). */
  signInToken?: SignInToken;
  /**
   * What the authorizer takes for now, in epoch ms (default `Date.now`): a test holds it to
   * decide a scheduled binding's edge for certain, whatever the machine's speed.
   */
  clock?: () => number;
}

/** Lifetime of the bearer token on each event delivery. */
const SINK_TOKEN_TTL_S = 300;

/** Where `createLogger` always was: its callers import it from here. */
export { createLogger };

/**
 * The one place that wires database → stores → services → front door, in named steps:
 * infrastructure, caches, stores, services, the background workers, and the REST door.
 */
export async function compose(config: Readonly<Config>, opts: ComposeOptions = {}): Promise<Arbor> {
  const logger = opts.logger ?? createLogger(config.logLevel, config.logFormat);
  const db = opts.database ?? (await openConfiguredDatabase(config, opts, logger));
  const metrics = opts.metrics ?? new ApiMetrics();
  try {
    const { uow, pager } = await infrastructure(config, opts, db, metrics, logger);
    const stores = createStores();
    const caches = readCaches(db, uow, stores, metrics);
    const audit =
      opts.audit === false ? NO_AUDIT : new AuditLog(stores.audit, resourcePresenter(KINDS));
    const usage = config.lastUsed ? usageOf(config, uow, stores, logger) : undefined;
    const layer = await serviceLayer({
      config,
      db,
      logger,
      metrics,
      uow,
      pager,
      stores,
      ...caches,
      audit,
      trustedKeys: opts.trustedKeys,
      signInToken: opts.signInToken,
      usage: usage?.recorder,
      clock: opts.clock ?? Date.now,
    });
    if (config.budgets.on) budgetsOf(config, db, metrics, logger).apply(layer);
    const workers = backgroundWorkers(config, opts, logger, { uow, stores, audit, layer });
    const door = restDoor(config, opts, logger, metrics, layer);
    return {
      config,
      db,
      services: layer.services,
      authz: layer.authz,
      features: layer.features,
      authenticator: layer.authenticator,
      tokens: layer.tokens,
      sts: layer.sts,
      logger,
      ...door,
      metrics,
      delivery: workers.delivery,
      bindingSweeper: workers.bindingSweeper,
      usage,
      oauth: layer.oauth,
      sessions: layer.sessions,
      issuedTokens: layer.issuedTokens,
      readCaches: caches.readCaches,
      close: async () => {
        await workers.bindingSweeper.stop();
        await layer.issuedTokens.stop();
        // Graceful shutdown writes the last-used times recorded since the last flush.
        await usage?.flusher.stop();
        await workers.delivery.stop();
        if (workers.sinkTransport instanceof HttpSinkTransport) workers.sinkTransport.close();
        await db.close();
      },
    };
  } catch (e) {
    if (!opts.database) await db.close();
    throw e;
  }
}

/** The cost budgets of the expensive calls, counted in the database every worker shares. */
function budgetsOf(config: Readonly<Config>, db: Database, metrics: ApiMetrics, logger: Logger) {
  const log = logger.child({ component: 'budgets' });
  return new Budgets({
    config: config.budgets,
    limiters: budgetLimiters(db.knex, (err) => log.warn({ err }, 'budget clean-up failed')),
    metrics,
    warn: (obj, msg) => log.warn(obj, msg),
  });
}

/** The configured database: PostgreSQL (with replicas and the change feed) or PGlite. */
function openConfiguredDatabase(
  config: Readonly<Config>,
  opts: ComposeOptions,
  logger: Logger,
): Promise<Database> {
  return openDatabase({
    url: config.databaseUrl,
    readUrls: config.databaseReadUrls,
    maxReplicaLagMs: config.readReplicaMaxLagMs,
    dataDir: config.dataDir,
    pooler: config.databasePooler,
    readCache: config.readCache,
    listenUrl: config.databaseListenUrl,
    // The driver's messages carry stacks; the first line says what went wrong.
    warn: (m) => logger.warn({ component: 'db' }, m.split('\n', 1)[0]),
    lock: opts.dataDirLock,
    role: opts.role,
  });
}

/** The infrastructure step: query metrics, migrations, the unit of work and the list pager. */
async function infrastructure(
  config: Readonly<Config>,
  opts: ComposeOptions,
  db: Database,
  metrics: ApiMetrics,
  logger: Logger,
): Promise<{ uow: KnexUnitOfWork; pager: ListPager }> {
  observeQueries(db.knex, (seconds, ok) =>
    metrics.observe(metrics.dbQueryDuration, { outcome: ok ? 'ok' : 'error' }, seconds),
  );
  if (tracingOn()) traceQueries(db.knex);
  metrics.observePool(() => poolStats(db.knex));
  if (opts.migrate !== false) {
    const applied = await migrateLatest(db.knex);
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
  }
  const codec = new PageTokenCodec(await serverSecret(db.knex, 'page-token'));
  // A token tells a replica, or another process's read cache, how fresh a read must be.
  if (db.replicas || db.changeFeed) enableConsistencyScopes();
  const uow = new KnexUnitOfWork(db.knex, db.replicas, db.changeFeed);
  const pager = new ListPager(codec, { writeGeneration: () => uow.writeGeneration });
  return { uow, pager };
}

type Caches = Pick<
  ServiceFoundation,
  | 'grants'
  | 'groupCache'
  | 'identityCache'
  | 'holdersCache'
  | 'checkCache'
  | 'selfChecks'
  | 'conditionGroups'
> & { readCaches: Record<string, ReadCacheStats> };

/** The caches step: the grant source every decision reads, and the read caches (read-caches.ts). */
function readCaches(
  db: Database,
  uow: KnexUnitOfWork,
  st: ReturnType<typeof createStores>,
  metrics: ApiMetrics,
): Caches {
  // Every cache but the bindings' is the foundation's as it comes; the bindings' is read
  // only through the check cache made here.
  const { bindingCache, ...caches } = readCachesOf(
    db,
    new KnexGrantSource(uow),
    () => uow.writeGeneration,
  );
  const { groupCache, conditionGroups, readCaches } = caches;
  const feed = db.changeFeed;
  if (feed) metrics.observeReadCaches(readCaches, () => feed.fresh());
  const checkCache: CheckCache | undefined =
    groupCache && bindingCache
      ? {
          bindings: bindingCache,
          groups: groupCache,
          loadGroup: (uid) => uow.read((tx) => st.groups.get(tx, uid)),
          ...(conditionGroups ? { conditionGroups } : {}),
        }
      : undefined;
  const selfChecks = checkCache && new RememberedSelfChecks(checkCache, uow, st.access);
  if (selfChecks) readCaches.self_checks = selfChecks.stats;
  return { ...caches, checkCache, selfChecks };
}

/** Event delivery and the binding-expiry sweeper; `arbor serve` starts them. */
function backgroundWorkers(
  config: Readonly<Config>,
  opts: ComposeOptions,
  logger: Logger,
  {
    uow,
    stores: st,
    audit,
    layer,
  }: Pick<ServiceFoundation, 'uow' | 'stores' | 'audit'> & {
    layer: ServiceLayer;
  },
): {
  sinkTransport: SinkTransport;
  delivery: DeliveryWorker;
  bindingSweeper: BindingExpirySweeper;
} {
  const { tokens } = layer;
  const sinkTransport =
    opts.sinkTransport ??
    new HttpSinkTransport({
      allowPrivate: config.allowPrivateSinks,
      timeoutMs: config.eventsSinkTimeoutMs,
    });
  const delivery = new DeliveryWorker(
    uow,
    st.outbox,
    sinkTransport,
    {
      sign: async (sink, { sub, ...claims }) =>
        (await tokens.signFor(TOKEN_USE.eventDelivery, sink, sub, claims, SINK_TOKEN_TTL_S)).token,
    },
    {
      source: config.issuerUrl,
      origin: new URL(config.issuerUrl).hostname,
      pollMs: config.eventsPollMs,
      leaseMs: config.eventsLeaseMs,
      maxAttempts: config.eventsMaxAttempts,
      backoffBaseMs: config.eventsBackoffMs,
      backoffMaxMs: config.eventsBackoffMaxMs,
      concurrency: config.eventsConcurrency,
    },
    logger.child({ component: 'events' }),
  );
  const bindingSweeper = new BindingExpirySweeper({
    uow,
    authz: layer.authz,
    bindings: st.roleBindings,
    audit,
    retentionMs: config.bindingRetentionMs,
    intervalMs: config.bindingSweepMs,
    // Access reviews' due defaults and scheduled openings run on the same beat; every
    // replica may run them (the store claims rows under SKIP LOCKED).
    alsoSweep: async () => {
      await layer.services.accessRequests.closeTimedOut();
      await layer.services.accessReviews.tick();
    },
    log: logger.child({ component: 'binding-expiry' }),
  });
  return { sinkTransport, delivery, bindingSweeper };
}

/** The last-used recorder every decision and authentication notes into, and its flush. */
function usageOf(
  config: Readonly<Config>,
  uow: KnexUnitOfWork,
  stores: ReturnType<typeof createStores>,
  logger: Logger,
): { recorder: UsageRecorder; flusher: UsageFlusher } {
  // Recording a use reads the time on every decision: from a field while serving, which is
  // most of what recording costs otherwise (core/coarse-clock.ts).
  const clock = new CoarseClock();
  const recorder = new UsageRecorder(clock.now, config.lastUsedResolutionMs);
  const flusher = new UsageFlusher({
    uow,
    writer: stores.usage,
    recorder,
    clock,
    intervalMs: config.lastUsedFlushMs,
    log: logger.child({ component: 'last-used' }),
  });
  return { recorder, flusher };
}

/** The doors step: the REST door (Koa and the fast reads beside it) with the public routes. */
function restDoor(
  config: Readonly<Config>,
  opts: ComposeOptions,
  logger: Logger,
  metrics: ApiMetrics,
  layer: ServiceLayer,
): Pick<Arbor, 'app' | 'openapi' | 'rest' | 'fastReads'> {
  const { sts, tokens, people, serverLogin, registryAuth } = layer;
  const { app, openapi, handler, fastReads } = createApp({
    services: layer.services,
    authenticator: layer.authenticator,
    logger,
    bodyLimit: config.maxBodyBytes,
    metrics,
    corsOrigins: config.corsOrigins,
    serverUrl: config.issuerUrl,
    features: layer.features,
    console: {
      assets: loadConsoleAssets(config.consoleDir),
      loginIssuer: config.loginIssuer,
    },
    fastReads: opts.fastReads !== false,
    publicRoutes: (t) => {
      mountStsRoutes(t, sts, tokens, people);
      mountOAuthRoutes(t, layer.oauth, tokens, layer.authenticator);
      mountTokenSessionRoutes(t, layer.sessions, layer.authenticator);
      mountLoginRoute(t, { audience: tokens.issuer, provider: serverLogin });
      if (registryAuth) mountRegistryAuthRoutes(t, registryAuth);
    },
  });
  return { app, openapi, rest: handler, fastReads };
}
