import type Koa from 'koa';
import type { Logger } from 'pino';
import { createApp } from './api/app.js';
import type { FastReads, NodeHandler } from './api/fast-reads.js';
import { loadConsoleAssets } from './api/console-static.js';
import type { OpenApiDocument } from './api/openapi/document.js';
import { Authorizer } from './auth/authorizer.js';
import { ApiTokenAuthenticator } from './auth/api-token-authenticator.js';
import { ChainAuthenticator, type Authenticator } from './auth/authenticator.js';
import { RemoteKeySets, type TrustedIssuerKeys } from './auth/remote-key-sets.js';
import type { SignInToken } from './auth/sign-in-token.js';
import { loadSigningKeys } from './auth/signing-keys.js';
import { SecurityTokenService } from './resources/sts/security-token-service.js';
import { TokenTester } from './resources/sts/token-tester.js';
import { enableConsistencyScopes } from './resources/consistency.js';
import { TOKEN_USE, TokenIssuer } from './auth/token-issuer.js';
import { mountLoginRoute } from './api/routes/login-routes.js';
import { mountStsRoutes } from './api/routes/sts-routes.js';
import type { Config } from './config.js';
import { PageTokenCodec } from './core/page-token.js';
import { openDatabase, type Database } from './db/connect.js';
import type { DataDirLock } from './db/data-dir-lock.js';
import { serverSecret } from './db/secrets.js';
import { createStores } from './db/stores/index.js';
import { KnexGrantSource } from './db/stores/grant-source.js';
import { KnexUnitOfWork } from './db/unit-of-work.js';
import type { ReadCacheStats } from './db/read-cache.js';
import { createLogger } from './logger.js';
import { readCachesOf } from './read-caches.js';
import { GroupService } from './resources/groups/group-service.js';
import { HealthService } from './resources/health-service.js';
import { ListPager } from './resources/list-pager.js';
import type { Services } from './services.js';
import { IdentityService } from './resources/identities/identity-service.js';
import { RoleBindingService } from './resources/role-bindings/role-binding-service.js';
import { AccessService } from './resources/access/access-service.js';
import {
  RememberedSelfChecks,
  type CheckCache,
} from './resources/access/remembered-self-checks.js';
import { BindingExpirySweeper } from './resources/role-bindings/binding-expiry-sweeper.js';
import { RoleService } from './resources/roles/role-service.js';
import { AdvisoryImporter } from './resources/advisories/advisory-import.js';
import { AdvisoryService } from './resources/advisories/advisory-service.js';
import { RepoService } from './resources/repos/repo-service.js';
import { TagService } from './resources/tags/tag-service.js';
import { AccountAssociationService } from './resources/account-associations/account-association-service.js';
import { GroupInviteService } from './resources/group-invites/group-invite-service.js';
import { IdentityProviderService } from './resources/identity-providers/identity-provider-service.js';
import { ManagedGuard } from './resources/managed/managed-guard.js';
import { ManagedResourceService } from './resources/managed/managed-resource-service.js';
import { TrustedKeyService } from './resources/trusted-keys/trusted-key-service.js';
import { RegistryCredentials } from './resources/registry-auth/registry-credentials.js';
import { RegistryEventService } from './resources/registry-auth/registry-event-service.js';
import { RegistryTokenService } from './resources/registry-auth/registry-token-service.js';
import { mountRegistryAuthRoutes } from './api/routes/registry-auth-routes.js';
import { UserSignIn } from './resources/users/user-sign-in.js';
import { KnexUserStore } from './db/stores/user-store.js';
import { UserService } from './resources/users/user-service.js';
import { SecretBox } from './auth/secret-box.js';
import { loadSecretKeys } from './auth/secret-keys.js';
import { ApiMetrics } from './metrics/api-metrics.js';
import { observeQueries, poolStats } from './db/query-observer.js';
import { OutboundFetcher } from './outbound/outbound-fetch.js';
import { AuditLog } from './resources/audit/audit-log.js';
import { AuditService } from './resources/audit/audit-service.js';
import { SubscriptionService } from './resources/subscriptions/subscription-service.js';
import { DeliveryWorker } from './resources/events/delivery-worker.js';
import type { SinkTransport } from './resources/events/sink-transport.js';
import { HttpSinkTransport } from './outbound/http-sink-transport.js';
import { presentResource } from './wire/resource-presenter.js';
import { AdminService } from './resources/admin/admin-service.js';
import { migrateLatest, migrationStatus } from './db/migrate.js';
// @compose-imports

export interface Arbor {
  config: Readonly<Config>;
  db: Database;
  services: Services;
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
  /** false: services record no audit trail and queue no events (the benchmark's baseline). */
  audit?: boolean;
  /** How event deliveries leave the process (default: HTTP with the address policy). */
  sinkTransport?: SinkTransport;
  /** false: every REST request goes through Koa (tests comparing it with the fast reads). */
  fastReads?: boolean;
  /** A development run's sign-in token, accepted as the bootstrap admin (cli/serve.ts). */
  signInToken?: SignInToken;
}

/** Where `createLogger` always was: its callers import it from here. */
export { createLogger };

/** Lifetime of the bearer token on each event delivery. */
const SINK_TOKEN_TTL_S = 300;

/** The one place that wires database → stores → services → front door. */
export async function compose(config: Readonly<Config>, opts: ComposeOptions = {}): Promise<Arbor> {
  const logger = opts.logger ?? createLogger(config.logLevel, config.logFormat);
  const db =
    opts.database ??
    (await openDatabase({
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
    }));
  const metrics = opts.metrics ?? new ApiMetrics();
  try {
    observeQueries(db.knex, (seconds, ok) =>
      metrics.dbQueryDuration.observe({ outcome: ok ? 'ok' : 'error' }, seconds),
    );
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
    const { grants, groupCache, bindingCache, holdersCache, readCaches } = readCachesOf(
      db,
      new KnexGrantSource(uow),
    );
    const authz = new Authorizer(grants);
    const feed = db.changeFeed;
    if (feed) metrics.observeReadCaches(readCaches, () => feed.fresh());
    const st = createStores();
    const checkCache: CheckCache | undefined =
      groupCache && bindingCache
        ? {
            bindings: bindingCache,
            groups: groupCache,
            loadGroup: (uid) => uow.read((tx) => st.groups.get(tx, uid)),
          }
        : undefined;
    const selfChecks = checkCache && new RememberedSelfChecks(checkCache, uow, st.access);
    if (selfChecks) readCaches.self_checks = selfChecks.stats;
    const allowInsecureIssuers = config.allowInsecureIssuers;
    const managed = new ManagedGuard(st.managers);
    const { loginIssuer, loginClientId } = config;
    const serverLogin =
      loginIssuer && loginClientId ? { issuer: loginIssuer, clientId: loginClientId } : undefined;
    const auditLog = opts.audit === false ? undefined : new AuditLog(st.audit, presentResource);
    const common = { uow, authz, pager, managed, audit: auditLog };
    const identityProviders = new IdentityProviderService({
      ...common,
      groups: st.groups,
      roles: st.roles,
      idps: st.identityProviders,
      allowInsecureIssuers,
      serverLogin,
      secrets: new SecretBox(await loadSecretKeys(config.secretKey, config.secretKeysDir)),
    });
    const base: Omit<Services, 'tokenTester'> = {
      health: new HealthService(uow, st.pinger),
      groups: new GroupService({
        ...common,
        groups: st.groups,
        ...(groupCache ? { cache: groupCache } : {}),
      }),
      identities: new IdentityService({
        ...common,
        identities: st.identities,
        allowInsecureIssuers,
      }),
      roles: new RoleService({ ...common, roles: st.roles }),
      roleBindings: new RoleBindingService({ ...common, bindings: st.roleBindings }),
      access: new AccessService({
        uow,
        authz,
        pager,
        access: st.access,
        ...(checkCache ? { cache: checkCache } : {}),
        ...(selfChecks ? { selfChecks } : {}),
        ...(holdersCache ? { holders: holdersCache } : {}),
      }),
      repos: new RepoService({ ...common, repos: st.repos }),
      tags: new TagService({ ...common, tags: st.tags }),
      advisories: new AdvisoryService({ ...common, advisories: st.advisories }),
      advisoryImport: new AdvisoryImporter({ uow, authz, advisories: st.advisories }),
      identityProviders,
      accountAssociations: new AccountAssociationService({
        ...common,
        groups: st.groups,
        associations: st.accountAssociations,
      }),
      groupInvites: new GroupInviteService({
        ...common,
        groups: st.groups,
        roles: st.roles,
        invites: st.groupInvites,
        bindings: st.roleBindings,
      }),
      trustedKeys: new TrustedKeyService(uow, st.trustedKeys, authz),
      managed: new ManagedResourceService({ uow, authz, guard: managed }),
      audit: new AuditService({ uow, authz, pager, audit: st.audit }),
      subscriptions: new SubscriptionService({
        ...common,
        subscriptions: st.subscriptions,
        allowPrivateSinks: config.allowPrivateSinks,
      }),
      admin: new AdminService({
        authz,
        kind: db.kind,
        migrationStatus: () => migrationStatus(db.knex),
        ...(db.dumpDataDir ? { dumpDataDir: db.dumpDataDir } : {}),
        resealSecrets: () => identityProviders.resealClientSecrets(),
      }),
    };
    // Before serving: seal plain-text secrets left by older versions, and move secrets
    // sealed by a retired key onto the current one (key rotation).
    const sealing = await base.identityProviders.resealClientSecrets();
    if (sealing.resealed > 0) logger.info({ resealed: sealing.resealed }, 'client secrets sealed');
    if (sealing.unreadable.length > 0) {
      logger.warn(
        { idps: sealing.unreadable },
        'client secrets sealed by a key that is no longer configured (ARBOR_SECRET_KEY)',
      );
    }
    const tokens = new TokenIssuer(
      config.issuerUrl,
      config.issuerUrl,
      await loadSigningKeys(config.signingKeysDir),
    );
    const remoteKeys = new RemoteKeySets({
      allowInsecure: config.allowInsecureIssuers,
      trusted: opts.trustedKeys ?? base.trustedKeys,
      log: logger,
      fetcher: metrics.instrumentJsonFetcher(
        new OutboundFetcher({ allowInsecure: config.allowInsecureIssuers }),
      ),
    });
    const users = new UserService({
      uow,
      authz,
      users: new KnexUserStore(),
      maxPeoplePerProvider: config.maxPeoplePerProvider,
      ...(auditLog
        ? { audit: { recorder: auditLog, identities: st.identities, bindings: st.roleBindings } }
        : {}),
      serverProvider: serverLogin,
    });
    const sts = new SecurityTokenService(base.identities, remoteKeys, tokens, {
      allowInsecureIssuers,
      people: users,
    });
    // The claim tester runs the exchange's own rules (and key lookups), so it comes with the STS.
    const tokenTester = new TokenTester(base.identities, sts, async (p) => {
      const v = await authz.visibility(p, 'identity.create');
      return v.kind === 'all' || v.scopes.length > 0;
    });
    const services: Services = { ...base, tokenTester };
    const people = new UserSignIn(users, remoteKeys, tokens, allowInsecureIssuers);
    sts.exchange = metrics.countExchanges(sts.exchange.bind(sts));
    const authenticator = new ChainAuthenticator(
      config.adminToken,
      new ApiTokenAuthenticator(tokens),
      opts.signInToken,
    );
    const service = config.registryService;
    if (service !== undefined) sts.acceptAudience(service);
    const registryAuth = service && {
      credentials: new RegistryCredentials(authenticator, tokens, sts, service),
      tokens: new RegistryTokenService({
        ...common,
        repos: st.repos,
        service,
        sign: (sub, access, ttl) =>
          tokens.signFor(TOKEN_USE.registryAccess, service, sub, { access }, ttl),
      }),
      events: new RegistryEventService(services.repos, services.tags),
      notifyToken: config.registryNotifyToken,
      bodyLimit: config.maxBodyBytes,
    };
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
          (await tokens.signFor(TOKEN_USE.eventDelivery, sink, sub, claims, SINK_TOKEN_TTL_S))
            .token,
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
      authz,
      bindings: st.roleBindings,
      ...(auditLog ? { audit: auditLog } : {}),
      retentionMs: config.bindingRetentionMs,
      intervalMs: config.bindingSweepMs,
      log: logger.child({ component: 'binding-expiry' }),
    });
    const {
      app,
      openapi,
      handler: rest,
      fastReads,
    } = createApp({
      services,
      authenticator,
      logger,
      bodyLimit: config.maxBodyBytes,
      metrics,
      corsOrigins: config.corsOrigins,
      serverUrl: config.issuerUrl,
      console: {
        assets: loadConsoleAssets(config.consoleDir),
        loginIssuer: config.loginIssuer,
      },
      fastReads: opts.fastReads !== false,
      publicRoutes: (t) => {
        mountStsRoutes(t, sts, tokens, people);
        mountLoginRoute(t, { audience: tokens.issuer, provider: serverLogin });
        if (registryAuth) mountRegistryAuthRoutes(t, registryAuth);
      },
    });
    return {
      config,
      db,
      services,
      authz,
      authenticator,
      tokens,
      sts,
      logger,
      app,
      openapi,
      rest,
      fastReads,
      metrics,
      delivery,
      bindingSweeper,
      readCaches,
      close: async () => {
        await bindingSweeper.stop();
        await delivery.stop();
        if (sinkTransport instanceof HttpSinkTransport) sinkTransport.close();
        await db.close();
      },
    };
  } catch (e) {
    if (!opts.database) await db.close();
    throw e;
  }
}
