import type Koa from 'koa';
import { pino, type Logger } from 'pino';
import { createApp } from './api/app.js';
import { Authorizer } from './auth/authorizer.js';
import { ApiTokenAuthenticator } from './auth/api-token-authenticator.js';
import { ChainAuthenticator, type Authenticator } from './auth/authenticator.js';
import { RemoteKeySets, type TrustedIssuerKeys } from './auth/remote-key-sets.js';
import { loadSigningKeys } from './auth/signing-keys.js';
import { SecurityTokenService } from './auth/sts.js';
import { TokenIssuer } from './auth/token-issuer.js';
import { mountStsRoutes } from './api/routes/sts-routes.js';
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
import { KnexGrantSource } from './db/stores/grant-source.js';
import { KnexIdentityStore } from './db/stores/identity-store.js';
import { KnexRoleBindingStore } from './db/stores/role-binding-store.js';
import { KnexRoleStore } from './db/stores/role-store.js';
import { IdentityService } from './resources/identities/identity-service.js';
import { RoleBindingService } from './resources/role-bindings/role-binding-service.js';
import { RoleService } from './resources/roles/role-service.js';
import { KnexAdvisoryStore } from './db/stores/advisory-store.js';
import { KnexRepoStore } from './db/stores/repo-store.js';
import { KnexTagStore } from './db/stores/tag-store.js';
import { AdvisoryImporter } from './resources/advisories/advisory-import.js';
import { AdvisoryService } from './resources/advisories/advisory-service.js';
import { RepoService } from './resources/repos/repo-service.js';
import { TagService } from './resources/tags/tag-service.js';
import { KnexAccountAssociationStore } from './db/stores/account-association-store.js';
import { KnexGroupInviteStore } from './db/stores/group-invite-store.js';
import { KnexIdentityProviderStore } from './db/stores/identity-provider-store.js';
import { AccountAssociationService } from './resources/account-associations/account-association-service.js';
import { GroupInviteService } from './resources/group-invites/group-invite-service.js';
import { IdentityProviderService } from './resources/identity-providers/identity-provider-service.js';
import { KnexTrustedKeyStore } from './db/stores/trusted-key-store.js';
import { TrustedKeyService } from './resources/trusted-keys/trusted-key-service.js';
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
  close(): Promise<void>;
}

export interface ComposeOptions {
  /** Use this database instead of opening the configured one (tests). */
  database?: Database;
  logger?: Logger;
  /** Apply pending migrations first (default true). */
  migrate?: boolean;
  /** Issuer keys trusted without discovery (the cluster's service-account keys). */
  trustedKeys?: TrustedIssuerKeys;
}

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'arbor' }, timestamp: pino.stdTimeFunctions.isoTime });
}

/** The one place that wires database → stores → services → front door. */
export async function compose(config: Readonly<Config>, opts: ComposeOptions = {}): Promise<Arbor> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const db =
    opts.database ??
    (await openDatabase({
      url: config.databaseUrl,
      dataDir: config.dataDir,
      warn: (m) => logger.warn({ component: 'db' }, m),
    }));
  try {
    if (opts.migrate !== false) {
      const applied = await migrateLatest(db.knex);
      if (applied.length > 0) logger.info({ applied }, 'migrations applied');
    }
    const codec = new PageTokenCodec(await serverSecret(db.knex, 'page-token'));
    const uow = new KnexUnitOfWork(db.knex);
    const pager = new ListPager(codec);
    const authz = new Authorizer(new KnexGrantSource(uow));
    const services: Services = {
      health: new HealthService(uow, new KnexPinger()),
      groups: new GroupService({ uow, groups: new KnexGroupStore(), authz, pager }),
      identities: new IdentityService({
        uow,
        identities: new KnexIdentityStore(),
        authz,
        pager,
        allowInsecureIssuers: config.allowInsecureIssuers,
      }),
      roles: new RoleService({ uow, roles: new KnexRoleStore(), authz, pager }),
      roleBindings: new RoleBindingService({
        uow,
        bindings: new KnexRoleBindingStore(),
        authz,
        pager,
      }),
      repos: new RepoService({ uow, repos: new KnexRepoStore(), authz, pager }),
      tags: new TagService({ uow, tags: new KnexTagStore(), authz, pager }),
      advisories: new AdvisoryService({ uow, advisories: new KnexAdvisoryStore(), authz, pager }),
      advisoryImport: new AdvisoryImporter({ uow, advisories: new KnexAdvisoryStore(), authz }),
      identityProviders: new IdentityProviderService({
        uow,
        authz,
        pager,
        groups: new KnexGroupStore(),
        roles: new KnexRoleStore(),
        idps: new KnexIdentityProviderStore(),
        allowInsecureIssuers: config.allowInsecureIssuers,
      }),
      accountAssociations: new AccountAssociationService({
        uow,
        authz,
        pager,
        groups: new KnexGroupStore(),
        associations: new KnexAccountAssociationStore(),
      }),
      groupInvites: new GroupInviteService({
        uow,
        authz,
        pager,
        groups: new KnexGroupStore(),
        roles: new KnexRoleStore(),
        invites: new KnexGroupInviteStore(),
        bindings: new KnexRoleBindingStore(),
      }),
      trustedKeys: new TrustedKeyService(uow, new KnexTrustedKeyStore(), authz),
      // @services (one entry per service; keep construction to one line where you can)
    };
    const tokens = new TokenIssuer(
      config.issuerUrl,
      config.issuerUrl,
      await loadSigningKeys(config.signingKeysDir),
    );
    const sts = new SecurityTokenService(
      services.identities,
      new RemoteKeySets({
        allowInsecure: config.allowInsecureIssuers,
        trusted: opts.trustedKeys ?? services.trustedKeys,
      }),
      tokens,
    );
    const authenticator = new ChainAuthenticator(
      config.adminToken,
      new ApiTokenAuthenticator(tokens),
    );
    const app = createApp({
      services,
      authenticator,
      logger,
      bodyLimit: config.maxBodyBytes,
      publicRoutes: (r) => mountStsRoutes(r, sts, tokens),
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
      close: () => db.close(),
    };
  } catch (e) {
    if (!opts.database) await db.close();
    throw e;
  }
}
