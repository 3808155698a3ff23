import type { Logger } from 'pino';
import { Authorizer, type GrantSource } from './auth/authorizer.js';
import { ApiTokenAuthenticator } from './auth/api-token-authenticator.js';
import { ChainAuthenticator, type Authenticator } from './auth/authenticator.js';
import { RemoteKeySets, type TrustedIssuerKeys } from './auth/remote-key-sets.js';
import { SecretBox } from './auth/secret-box.js';
import type { SignInToken } from './auth/sign-in-token.js';
import { loadSecretKeys } from './auth/secret-keys.js';
import { loadSigningKeys } from './auth/signing-keys.js';
import { ResourceAccessTokens } from './auth/resource-access-tokens.js';
import { ResourceServerTokens } from './resources/oauth/resource-server-tokens.js';
import { TOKEN_USE, TokenIssuer } from './auth/token-issuer.js';
import type { UsageRecorder } from './auth/usage-recorder.js';
import type { RevokedTokens } from './auth/revoked-tokens.js';
import type { DelegationPolicies } from './auth/delegation.js';
import { OAuthService } from './resources/oauth/oauth-service.js';
import { IssuedTokenRecorder } from './auth/issued-token-recorder.js';
import { IssuedTokenFlusher } from './resources/oauth/issued-token-flusher.js';
import { TokenSessionService } from './resources/oauth/token-session-service.js';
import { revokedTokensOf } from './read-caches.js';
import type { RegistryAuthRouteDeps } from './api/routes/registry-auth-routes.js';
import type { Config } from './config.js';
import type { Database } from './db/connect.js';
import { migrationStatus } from './db/migrate.js';
import type { createStores } from './db/stores/index.js';
import { KnexUserStore } from './db/stores/user-store.js';
import type { KnexUnitOfWork } from './db/unit-of-work.js';
import type { FeedCache } from './db/read-cache.js';
import type { ReadCache } from './resources/read-cache.js';
import type { ApiMetrics } from './metrics/api-metrics.js';
import { OutboundFetcher } from './outbound/outbound-fetch.js';
import { AccessService, type HoldersRead } from './resources/access/access-service.js';
import { AccessSimulator } from './resources/access/access-simulator.js';
import type {
  CheckCache,
  RememberedSelfChecks,
} from './resources/access/remembered-self-checks.js';
import { AdminService } from './resources/admin/admin-service.js';
import type { ChangeRecorder } from './resources/audit/audit-log.js';
import { AuditService } from './resources/audit/audit-service.js';
import type { Group } from './resources/groups/group.js';
import type { Identity } from './resources/identities/identity.js';
import { GroupService } from './resources/groups/group-service.js';
import { HealthService } from './resources/health-service.js';
import { IdentityService } from './resources/identities/identity-service.js';
import { NameResolver } from './resources/names/name-resolver.js';
import { PathBook } from './resources/names/path-book.js';
import { conditionDeps, type ConditionGroup } from './resources/names/condition-groups.js';
import type { ListPager } from './resources/list-pager.js';
import { ManagedGuard } from './resources/managed/managed-guard.js';
import { ManagedResourceService } from './resources/managed/managed-resource-service.js';
import { RegistryCredentials } from './resources/registry-auth/registry-credentials.js';
import { RegistryEventService } from './resources/registry-auth/registry-event-service.js';
import { RegistryTokenService } from './resources/registry-auth/registry-token-service.js';
import { RoleBindingService } from './resources/role-bindings/role-binding-service.js';
import { RoleService } from './resources/roles/role-service.js';
import { SecurityTokenService } from './resources/sts/security-token-service.js';
import { TokenTester } from './resources/sts/token-tester.js';
import { TrustedKeyService } from './resources/trusted-keys/trusted-key-service.js';
import { UserService } from './resources/users/user-service.js';
import { UserSignIn } from './resources/users/user-sign-in.js';
import type { Services } from './services.js';
import { createFeatures, type FeatureMounts, type FeatureServices } from './features.js';
import { UnusedAccessService } from './resources/usage/unused-access-service.js';
// @service-layer-imports

/** What the services are built on: the infrastructure and cache steps of compose(). */
export interface ServiceFoundation {
  config: Readonly<Config>;
  db: Database;
  logger: Logger;
  metrics: ApiMetrics;
  uow: KnexUnitOfWork;
  pager: ListPager;
  stores: ReturnType<typeof createStores>;
  grants: GrantSource;
  groupCache: FeedCache<Group | undefined> | undefined;
  /** The identities STS exchanges name (read-caches.ts); undefined without a change feed. */
  identityCache: FeedCache<Identity | undefined> | undefined;
  holdersCache: FeedCache<HoldersRead> | undefined;
  /**
   * A conditional decision's group path, kept while the change feed vouches, or on PGlite
   * until this process's next transaction (read-caches.ts).
   */
  conditionGroups: ReadCache<ConditionGroup> | undefined;
  checkCache: CheckCache | undefined;
  selfChecks: RememberedSelfChecks | undefined;
  /** Where every write records itself (NO_AUDIT only when compose() was told `audit: false`). */
  audit: ChangeRecorder;
  /** Issuer keys trusted without discovery (the cluster's); default: the trusted-key service. */
  trustedKeys: TrustedIssuerKeys | undefined;
  /** A development run's sign-in token, accepted as the bootstrap admin (cli/serve.ts). */
  signInToken: SignInToken | undefined;
  /** Where decisions and authentications record last use (undefined: ARBOR_LAST_USED=false). */
  usage: UsageRecorder | undefined;
  /** The authorizer's now, in epoch ms (`ComposeOptions.clock`; Date.now but in tests). */
  clock: () => number;
}

/** The core services and every feature's (src/features.ts), as `arbor.services`. */
export type AllServices = Services & FeatureServices;

/** The services and the token machinery the doors are given. */
export interface ServiceLayer {
  services: AllServices;
  /** What the doors mount of the features (src/features.ts). */
  features: FeatureMounts;
  authz: Authorizer;
  authenticator: Authenticator;
  tokens: TokenIssuer;
  sts: SecurityTokenService;
  /** People's sign-in at the STS (no `identity`). */
  people: UserSignIn;
  /** The server's own login provider, when configured. */
  serverLogin: { issuer: string; clientId: string } | undefined;
  /** The registry's token server and notifications, when a registry service is configured. */
  registryAuth: RegistryAuthRouteDeps | undefined;
  /** The token endpoint's exchange, introspection and revocation (docs/oauth.md). */
  oauth: OAuthService;
  /** `arbor auth sessions`: the issued-token record, listed and revoked (docs/oauth.md). */
  sessions: TokenSessionService;
  /** Writes the issued-token record in batches; `arbor serve` starts it. */
  issuedTokens: IssuedTokenFlusher;
}

type ResourceServices = Omit<AllServices, 'tokenTester' | 'names'>;

/**
 * The services step of compose(): every resource service, then the token machinery that
 * uses them (signing, the STS, people's sign-in, the registry's token server).
 */
export async function serviceLayer(f: ServiceFoundation): Promise<ServiceLayer> {
  const authz = new Authorizer(
    f.grants,
    f.clock,
    f.usage,
    conditionDeps(f.uow, f.stores.names, f.logger, f.conditionGroups),
  );
  const { loginIssuer, loginClientId } = f.config;
  const serverLogin =
    loginIssuer && loginClientId ? { issuer: loginIssuer, clientId: loginClientId } : undefined;
  const { features, ...base } = await resourceServices(f, authz, serverLogin);
  await sealClientSecrets(base, f.logger);
  const signingKeys = await loadSigningKeys(f.config.signingKeysDir);
  const tokens = new TokenIssuer(f.config.issuerUrl, f.config.issuerUrl, signingKeys);
  // Tokens for the other resource servers are signed with the same keys (one JWKS).
  const resourceTokens = new ResourceAccessTokens(f.config.issuerUrl, signingKeys);
  const { sts, people, tokenTester } = tokenServices(f, authz, base, tokens, serverLogin);
  // Names answer through the Gets, so a resolved name is the resource its Get answers.
  const names = new NameResolver({
    uow: f.uow,
    authz,
    names: f.stores.names,
    groups: base.groups,
    identities: base.identities,
    roles: base.roles,
  });
  const services: AllServices = { ...base, tokenTester, names };
  // Every API token is asked whether it (or a token it was exchanged from) is revoked.
  const { revoked } = revokedTokensOf(f.db, {
    isRevoked: (jti) => f.uow.read((tx) => f.stores.tokenRevocations.isRevoked(tx, jti)),
  });
  // A delegated token is asked of its delegation policies on every request (docs/oauth.md).
  const delegations = base.delegationPolicies;
  const apiTokens = new ApiTokenAuthenticator(
    tokens,
    undefined,
    undefined,
    f.usage,
    revoked,
    delegations,
  );
  const authenticator = new ChainAuthenticator(f.config.adminToken, apiTokens, f.signInToken);
  const oauth = oauthOf(f, authz, {
    tokens,
    resourceTokens,
    sts,
    apiTokens,
    revoked,
    names,
    delegations,
  });
  // Every API token signed is recorded (in batches, off the request path) for sessions.
  const recorder = new IssuedTokenRecorder();
  tokens.onSigned = (t) => recorder.issued(t);
  const issuedTokens = new IssuedTokenFlusher({
    uow: f.uow,
    store: f.stores.issuedTokens,
    recorder,
    log: f.logger.child({ component: 'issued-tokens' }),
  });
  const sessions = new TokenSessionService({
    uow: f.uow,
    pager: f.pager,
    store: f.stores.issuedTokens,
    revocations: f.stores.tokenRevocations,
    revoked,
    audit: f.audit,
    flusher: issuedTokens,
  });
  const registryAuth = registryAuthOf(f, authz, services, { tokens, sts, authenticator });
  return {
    services,
    features,
    authz,
    authenticator,
    tokens,
    sts,
    people,
    serverLogin,
    registryAuth,
    oauth,
    sessions,
    issuedTokens,
  };
}

/**
 * Every service of a resource kind, each given its stores, the unit of work and the caches:
 * the core's here, then every feature's from its own module (src/features.ts).
 */
async function resourceServices(
  f: ServiceFoundation,
  authz: Authorizer,
  serverLogin: ServiceLayer['serverLogin'],
): Promise<ResourceServices & { features: FeatureMounts }> {
  const { config, db } = f;
  const core = coreServices(f, authz);
  const secrets = new SecretBox(await loadSecretKeys(config.secretKey, config.secretKeysDir));
  const { services, mounts } = createFeatures({
    common: core.common,
    stores: f.stores,
    services: core.services,
    config,
    secrets,
    serverLogin,
  });
  const admin = new AdminService({
    authz,
    kind: db.kind,
    migrationStatus: () => migrationStatus(db.knex),
    ...(db.dumpDataDir ? { dumpDataDir: db.dumpDataDir } : {}),
    resealSecrets: () => services.identityProviders.resealClientSecrets(),
    sealedKeyIds: () => services.identityProviders.sealedKeyIds(),
  });
  return { ...core.services, ...services, admin, features: mounts };
}

/** The services that are not features: each given its stores, the unit of work and the caches. */
function coreServices(f: ServiceFoundation, authz: Authorizer) {
  const { config, uow, pager, stores: st } = f;
  const allowInsecureIssuers = config.allowInsecureIssuers;
  const managed = new ManagedGuard(st.managers);
  const common = { uow, authz, pager, managed, audit: f.audit };
  const roleBindings = new RoleBindingService({ ...common, bindings: st.roleBindings });
  // Paths of names beside uids in answers, each page's names in one read.
  const paths = new PathBook({ uow, authz, names: st.names });
  const services = {
    health: new HealthService(uow, st.pinger),
    groups: new GroupService({
      ...common,
      groups: st.groups,
      ...(f.groupCache ? { cache: f.groupCache } : {}),
    }),
    identities: new IdentityService({
      ...common,
      identities: st.identities,
      bindings: st.roleBindings,
      allowInsecureIssuers,
      ...(f.identityCache ? { exchangeCache: f.identityCache } : {}),
    }),
    roles: new RoleService({ ...common, roles: st.roles }),
    roleBindings,
    access: new AccessService({
      uow,
      authz,
      pager,
      access: st.access,
      ...(f.checkCache ? { cache: f.checkCache } : {}),
      ...(f.selfChecks ? { selfChecks: f.selfChecks } : {}),
      ...(f.holdersCache ? { holders: f.holdersCache } : {}),
      paths,
    }),
    unusedAccess: new UnusedAccessService({
      uow,
      authz,
      pager,
      usage: st.usage,
      access: st.access,
    }),
    accessSimulator: new AccessSimulator({ uow, authz, pager, simulation: st.simulation }),
    trustedKeys: new TrustedKeyService(uow, st.trustedKeys, authz),
    managed: new ManagedResourceService({ uow, authz, guard: managed }),
    audit: new AuditService({ uow, authz, pager, audit: st.audit, paths }),
    // @services
  };
  return { common, services };
}

/**
 * Before serving: seal plain-text secrets left by older versions, and move secrets sealed
 * by a retired key onto the current one (key rotation).
 */
async function sealClientSecrets(base: ResourceServices, logger: Logger): Promise<void> {
  const sealing = await base.identityProviders.resealClientSecrets();
  if (sealing.resealed > 0) logger.info({ resealed: sealing.resealed }, 'client secrets sealed');
  if (sealing.unreadable.length > 0) {
    logger.warn(
      { idps: sealing.unreadable },
      'client secrets sealed by a key that is no longer configured (ARBOR_SECRET_KEY)',
    );
  }
}

/** The STS, people's sign-in and the claim tester, over the issuers' keys. */
function tokenServices(
  f: ServiceFoundation,
  authz: Authorizer,
  base: ResourceServices,
  tokens: TokenIssuer,
  serverLogin: ServiceLayer['serverLogin'],
): { sts: SecurityTokenService; people: UserSignIn; tokenTester: TokenTester } {
  const { config, metrics, stores: st } = f;
  const allowInsecureIssuers = config.allowInsecureIssuers;
  const remoteKeys = new RemoteKeySets({
    allowInsecure: allowInsecureIssuers,
    trusted: f.trustedKeys ?? base.trustedKeys,
    log: f.logger,
    fetcher: metrics.instrumentJsonFetcher(
      new OutboundFetcher({ allowInsecure: allowInsecureIssuers }),
    ),
  });
  const users = new UserService({
    uow: f.uow,
    authz,
    users: new KnexUserStore(),
    maxPeoplePerProvider: config.maxPeoplePerProvider,
    audit: { recorder: f.audit, identities: st.identities, bindings: st.roleBindings },
    serverProvider: serverLogin,
  });
  const sts = new SecurityTokenService(base.identities, remoteKeys, tokens, {
    allowInsecureIssuers,
    people: users,
    ...(f.usage ? { usage: f.usage } : {}),
  });
  // The claim tester runs the exchange's own rules (and key lookups), so it comes with the STS.
  const tokenTester = new TokenTester(base.identities, sts, async (p) => {
    const v = await authz.visibility(p, 'identity.create');
    return v.kind === 'all' || v.scopes.length > 0;
  });
  const people = new UserSignIn(users, remoteKeys, tokens, allowInsecureIssuers);
  sts.exchange = metrics.countExchanges(sts.exchange.bind(sts));
  return { sts, people, tokenTester };
}

/** The OAuth 2.0 token endpoint's service, over the STS and the API tokens (docs/oauth.md). */
function oauthOf(
  f: ServiceFoundation,
  authz: Authorizer,
  t: {
    tokens: TokenIssuer;
    resourceTokens: ResourceAccessTokens;
    sts: SecurityTokenService;
    apiTokens: ApiTokenAuthenticator;
    revoked: RevokedTokens;
    names: NameResolver;
    delegations: DelegationPolicies;
  },
): OAuthService {
  return new OAuthService({
    uow: f.uow,
    issuer: t.tokens,
    sts: t.sts,
    apiTokens: t.apiTokens,
    revoked: t.revoked,
    revocations: f.stores.tokenRevocations,
    authz,
    names: t.names,
    delegations: t.delegations,
    audit: f.audit,
    resourceServers: new ResourceServerTokens({
      uris: f.config.oauthResourceServers,
      tokens: t.resourceTokens,
      revoked: t.revoked,
      apiTokens: t.apiTokens,
    }),
  });
}

/** The registry's token server and notifications, when `ARBOR_REGISTRY_SERVICE` is set. */
function registryAuthOf(
  f: ServiceFoundation,
  authz: Authorizer,
  services: AllServices,
  t: { tokens: TokenIssuer; sts: SecurityTokenService; authenticator: Authenticator },
): RegistryAuthRouteDeps | undefined {
  const service = f.config.registryService;
  if (service !== undefined) t.sts.acceptAudience(service);
  if (!service) return undefined;
  return {
    credentials: new RegistryCredentials(t.authenticator, t.tokens, t.sts, service, f.usage),
    tokens: new RegistryTokenService({
      uow: f.uow,
      authz,
      repos: f.stores.repos,
      service,
      sign: (sub, access, ttl) =>
        t.tokens.signFor(TOKEN_USE.registryAccess, service, sub, { access }, ttl),
    }),
    // The repos and tags are the registry feature's (src/features/registry-feature.ts).
    events: new RegistryEventService(services.registry.repos, services.registry.tags),
    notifyToken: f.config.registryNotifyToken,
    bodyLimit: f.config.maxBodyBytes,
  };
}
