import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from './config-error.js';
import { budgetVariables, budgetsOf, type BudgetConfig } from './budget-config.js';
import { canonicalResourceUri, parseResourceServers } from './core/resource-uri.js';

/** Typed, frozen configuration, read from the environment once at start-up. */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /** `DATABASE_READ_URL`: read replicas for Gets and Lists (docs/operations.md); empty → none. */
  databaseReadUrls: readonly string[];
  /** Staleness a replica read without a consistency token accepts, measured (not assumed). */
  readReplicaMaxLagMs: number;
  dataDir: string;
  /** DATABASE_POOLER: `transaction` behind a transaction-mode pooler (src/db/pooler-mode.ts). */
  databasePooler: 'none' | 'transaction';
  /** ARBOR_READ_CACHE: group rows and grants in memory, invalidated by LISTEN/NOTIFY. */
  readCache: boolean;
  /** DATABASE_LISTEN_URL: a direct connection for LISTEN when DATABASE_URL is a pooler. */
  databaseListenUrl: string | undefined;
  /** Directory of the token-signing keys (`*.jwk.json`); generated when empty. */
  signingKeysDir: string;
  issuerUrl: string;
  adminToken: string | undefined;
  allowInsecureIssuers: boolean;
  logLevel: string;
  /** `LOG_FORMAT`: `auto` is lines for a person on a terminal, JSON lines otherwise. */
  logFormat: 'auto' | 'json' | 'pretty';
  /** Largest request body accepted, in bytes. */
  maxBodyBytes: number;
  /** Port of the Prometheus `/metrics` listener; 0 turns it off. */
  metricsPort: number;
  /** Origins allowed by CORS (`*` for any); empty sends no CORS headers. */
  corsOrigins: readonly string[];
  /**
   * After SIGTERM, how long `/readyz` fails before the listener stops taking requests: 5 s in
   * a Kubernetes pod (its endpoints take a moment to drop it), 0 elsewhere, unless set.
   */
  shutdownDelayMs: number;
  /** After that, how long in-flight requests may take before their connections are cut. */
  shutdownTimeoutMs: number;
  /** The container registry's service name (`aud` of its tokens); unset → no token server. */
  registryService: string | undefined;
  /**
   * `ARBOR_OAUTH_RESOURCE_SERVERS`: the resource servers (absolute URIs, RFC 8707) the token
   * endpoint issues JWT access tokens for (RFC 9068; docs/oauth-clients.md); empty → none.
   */
  oauthResourceServers: readonly string[];
  /** Bearer token the registry sends with its notifications; unset → no notification endpoint. */
  registryNotifyToken: string | undefined;
  /** The server-level OIDC provider people sign in with (spec §5.2); unset → none. */
  loginIssuer: string | undefined;
  loginClientId: string | undefined;
  /** Built web console (`index.html` + assets) served at `/console`; unset → the package's. */
  consoleDir: string | undefined;
  /** People one organization IdentityProvider may register (docs/sign-in.md). */
  maxPeoplePerProvider: number;
  /** ARBOR_SECRET_KEY: base64 AES-256 keys sealing secrets at rest, newest first. */
  secretKey: string | undefined;
  /** Where generated secret keys live when ARBOR_SECRET_KEY is unset. */
  secretKeysDir: string;
  /** Event delivery (docs/events.md): sinks may be http:// and private/loopback addresses. */
  allowPrivateSinks: boolean;
  /** How often an idle delivery worker polls the outbox. */
  eventsPollMs: number;
  /** How long a worker's claim on a subscription lasts unrenewed (after a crash, the wait). */
  eventsLeaseMs: number;
  /** Consecutive failed deliveries after which a subscription is dead-lettered. */
  eventsMaxAttempts: number;
  /** First retry delay; doubles per failure up to eventsBackoffMaxMs (with jitter). */
  eventsBackoffMs: number;
  eventsBackoffMaxMs: number;
  /**
   * The whole-request deadline of one request to a sink (lookup, connect, TLS, status):
   * not an idle timeout, so a sink that trickles bytes cannot stretch it.
   */
  eventsSinkTimeoutMs: number;
  /** Subscriptions one process delivers to at once, each independently of the others. */
  eventsConcurrency: number;
  /** How long an expired role binding stays listed (as expired) before the sweeper deletes it. */
  bindingRetentionMs: number;
  /** How often the expiry sweeper looks for bindings past their retention. */
  bindingSweepMs: number;
  /** ARBOR_LAST_USED: record when bindings grant and identities authenticate (default on). */
  lastUsed: boolean;
  /** ARBOR_LAST_USED_FLUSH_MS: how often recorded last-used times are written (at most lost in a crash). */
  lastUsedFlushMs: number;
  /**
   * ARBOR_LAST_USED_RESOLUTION_MS: a last-used time moves only by at least this much, so a
   * binding's or identity's row is written at most this often, however busy it is.
   */
  lastUsedResolutionMs: number;
  /** `ARBOR_WORKERS`: processes serving the API (`arbor serve`); unset → one per core. */
  workers: number | undefined;
  /**
   * PEM files the API port serves TLS with (src/tls-files.ts reads them); unset → cleartext.
   * The metrics port stays plain HTTP either way.
   */
  tls: Readonly<TlsFiles> | undefined;
  /** With TLS: how its session tickets are sealed and rotated (src/tls-ticket-keys.ts). */
  tlsTickets: Readonly<TlsTickets>;
  /** How long a connection may take to send a request, and what an HTTP/2 session may hold. */
  http: Readonly<HttpLimits>;
  /** `grpc.health.v1.Health/Watch` streams open at once in this process; more are refused. */
  healthWatchMax: number;
  /**
   * A development run: `NODE_ENV` unset, `development` or `test` (any other value, `prod`
   * or a typo included, says this is no laptop: fail closed), not in a Kubernetes pod, the
   * embedded database, and no admin token nor login provider, so nobody could sign in.
   * `arbor serve` then makes a sign-in token for this run (auth/sign-in-token.ts) and, with
   * `HOST` unset, listens on loopback only.
   */
  devSignIn: boolean;
  /** Cost budgets of the expensive calls (src/budget-config.ts; docs/operations.md, "Budgets"). */
  budgets: Readonly<BudgetConfig>;
}

/**
 * The API port's bounds on slow and greedy peers (docs/security.md, "HTTP/2 limits").
 * HTTP/1.1: a request head must arrive within `headersTimeoutMs`, the whole request within
 * `requestTimeoutMs`, and an idle kept-alive connection is closed after `keepAliveTimeoutMs`
 * (longer than a load balancer's idle timeout, so that the balancer, not Arbor, closes it:
 * a server closing first races the balancer's next request onto a dying socket). HTTP/2: at most `maxConcurrentStreams` streams per session; a stream
 * still receiving its request is reset after `streamIdleMs` without a frame; a session with
 * no stream is closed (GOAWAY) after `sessionIdleMs`; request bytes held at once by a
 * session's open streams are capped at `sessionMaxBytes`.
 */
export interface HttpLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConcurrentStreams: number;
  streamIdleMs: number;
  sessionIdleMs: number;
  sessionMaxBytes: number;
}

/** Where the API port's certificate (chain) and private key live, as PEM files. */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/**
 * TLS session tickets, shared by every worker: the key of one `rotationMs` period seals the
 * tickets issued in it and opens them for one more; `keyFile` (ARBOR_TLS_TICKET_KEY_FILE)
 * is the operator's secret they are derived from, else the primary generates them.
 */
export interface TlsTickets {
  rotationMs: number;
  keyFile: string | undefined;
}

export { ConfigError };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The one boolean spelling of every variable: `true`/`false`, or `1`/`0`. */
const flag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'], { error: 'must be true or false (or 1 or 0)' })
    .optional()
    .transform((v) => (v === undefined ? fallback : v === 'true' || v === '1'));

const integer = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER, what?: string) =>
  z
    .string()
    .regex(/^\d+$/, { error: what ?? 'must be a whole number' })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { error: what ?? `must be at least ${min}` })
        .max(max, { error: what ?? `must be at most ${max}` }),
    )
    .optional()
    .transform((v) => v ?? fallback);

const port = (fallback: number) => integer(fallback, 0, 65535, 'must be a port number (0-65535)');

const text = (fallback: string) =>
  z
    .string()
    .optional()
    .transform((v) => v ?? fallback);

const url = z.string().refine((v) => URL.canParse(v), { error: 'must be a URL' });

/** `*`, or a comma-separated list of origins (`scheme://host[:port]`, no path). */
const origins = z
  .string()
  .optional()
  .transform((v) => (v ?? '').split(',').map((o) => o.trim().replace(/\/+$/, '')))
  .transform((list) => list.filter((o) => o !== ''))
  .refine((list) => list.every((o) => o === '*' || (URL.canParse(o) && new URL(o).origin === o)), {
    error: 'must be * or a comma-separated list of origins like https://app.example.com',
  });

/**
 * `DATABASE_READ_URL`: comma-separated, where a comma begins a new URL only when
 * `postgres://` follows it (a multi-host URL has commas of its own).
 */
function splitReadUrls(value: string): string[] {
  return value
    .split(/,(?=\s*postgres(?:ql)?:\/\/)/)
    .map((u) => u.trim())
    .filter((u) => u !== '');
}

/** A comma-separated list of names, blanks dropped. */
const names = z
  .string()
  .optional()
  .transform((v) =>
    Object.freeze(
      (v ?? '')
        .split(',')
        .map((n) => n.trim())
        .filter((n) => n !== ''),
    ),
  );

/**
 * Every environment variable Arbor reads, API and reconciler alike: adding one is one line
 * here (and a row in the README's table; a unit test holds the two together). Unset and
 * empty are the same: the default.
 */
export const environmentSchema = z.object({
  PORT: port(8080),
  // Unset: every interface, but loopback only in a development run (see `devSignIn`).
  HOST: z.string().optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, { error: 'must be a postgres:// URL' })
    .optional(),
  // Read replicas (docs/operations.md, "Read replicas").
  DATABASE_READ_URL: z
    .string()
    .transform(splitReadUrls)
    .refine((urls) => urls.every((u) => /^postgres(ql)?:\/\//.test(u)), {
      error: 'must be postgres:// URLs, comma-separated',
    })
    .optional()
    .transform((v) => Object.freeze(v ?? [])),
  ARBOR_READ_REPLICA_MAX_LAG_MS: integer(1_000, 1, 3_600_000),
  DATA_DIR: text('./.data'),
  DATABASE_POOLER: z
    .enum(['none', 'transaction'], { error: 'must be none or transaction' })
    .optional()
    .transform((v) => v ?? 'none'),
  // The read cache (docs/operations.md, "Read cache").
  ARBOR_READ_CACHE: flag(true),
  DATABASE_LISTEN_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, { error: 'must be a postgres:// URL' })
    .optional(),
  ARBOR_SIGNING_KEYS_DIR: z.string().optional(),
  ARBOR_ISSUER_URL: url.optional(),
  ARBOR_ADMIN_TOKEN: z.string().min(16, { error: 'must be at least 16 characters' }).optional(),
  ARBOR_ALLOW_INSECURE_ISSUERS: flag(false),
  LOG_LEVEL: z
    .enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` })
    .optional()
    .transform((v) => v ?? 'info'),
  LOG_FORMAT: z
    .enum(['auto', 'json', 'pretty'], { error: 'must be auto, json or pretty' })
    .optional()
    .transform((v) => v ?? 'auto'),
  METRICS_PORT: port(9464),
  ARBOR_CORS_ORIGINS: origins,
  // Unset: 5 in a Kubernetes pod, 0 elsewhere (loadConfig).
  ARBOR_SHUTDOWN_DELAY_SECONDS: z
    .string()
    .regex(/^\d+$/, { error: 'must be a whole number' })
    .transform(Number)
    .pipe(z.number().max(300, { error: 'must be at most 300' }))
    .optional(),
  ARBOR_SHUTDOWN_TIMEOUT_SECONDS: integer(20, 1, 3600),
  ARBOR_SECRET_KEY: z.string().optional(),
  ARBOR_SECRET_KEYS_DIR: z.string().optional(),
  ARBOR_REGISTRY_SERVICE: z.string().optional(),
  // Resource servers the token endpoint issues for (docs/oauth-clients.md).
  ARBOR_OAUTH_RESOURCE_SERVERS: z
    .string()
    .transform((v, ctx) => {
      const r = parseResourceServers(v);
      if (typeof r === 'string') ctx.addIssue({ code: 'custom', message: r });
      return typeof r === 'string' ? z.NEVER : r;
    })
    .optional()
    .transform((v) => v ?? Object.freeze([] as string[])),
  ARBOR_REGISTRY_NOTIFY_TOKEN: z
    .string()
    .min(16, { error: 'must be at least 16 characters' })
    .optional(),
  ARBOR_LOGIN_ISSUER: url.optional(),
  ARBOR_LOGIN_CLIENT_ID: z.string().optional(),
  ARBOR_MAX_PEOPLE_PER_PROVIDER: integer(10_000, 1),
  ARBOR_ALLOW_PRIVATE_SINKS: flag(false),
  ARBOR_EVENTS_POLL_MS: integer(1_000, 1),
  ARBOR_EVENTS_LEASE_MS: integer(30_000, 1),
  ARBOR_EVENTS_MAX_ATTEMPTS: integer(15, 1),
  ARBOR_EVENTS_BACKOFF_MS: integer(1_000, 1),
  ARBOR_EVENTS_BACKOFF_MAX_MS: integer(300_000, 1),
  ARBOR_EVENTS_SINK_TIMEOUT_MS: integer(10_000, 100, 300_000),
  ARBOR_EVENTS_CONCURRENCY: integer(16, 1, 1024),
  ARBOR_BINDING_RETENTION_SECONDS: integer(7 * 24 * 3600, 0, 366 * 24 * 3600),
  ARBOR_BINDING_SWEEP_SECONDS: integer(60, 1, 24 * 3600),
  ARBOR_LAST_USED: flag(true),
  ARBOR_LAST_USED_FLUSH_MS: integer(5_000, 100, 60_000),
  ARBOR_LAST_USED_RESOLUTION_MS: integer(60_000, 0, 3_600_000),
  ARBOR_WORKERS: z
    .string()
    .regex(/^\d+$/, { error: 'must be a whole number from 1 to 256' })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(1, { error: 'must be a whole number from 1 to 256' })
        .max(256, { error: 'must be a whole number from 1 to 256' }),
    )
    .optional(),
  ARBOR_TLS_CERT_FILE: z.string().optional(),
  ARBOR_TLS_KEY_FILE: z.string().optional(),
  // Session tickets (docs/operations.md, "TLS session resumption"): a day at most, the
  // longest a ticket key should live (RFC 8446 §4.6.1 allows a week; guidance is a day).
  ARBOR_TLS_TICKET_ROTATION_SECONDS: integer(3600, 1, 86_400),
  ARBOR_TLS_TICKET_KEY_FILE: z.string().optional(),
  ARBOR_HTTP_HEADERS_TIMEOUT_MS: integer(10_000, 1),
  ARBOR_HTTP_REQUEST_TIMEOUT_MS: integer(60_000, 1),
  // Above the 60 s idle timeout of the common cloud load balancers.
  ARBOR_HTTP_KEEP_ALIVE_TIMEOUT_MS: integer(65_000, 1),
  ARBOR_HTTP2_MAX_CONCURRENT_STREAMS: integer(100, 1, 10_000),
  ARBOR_HTTP2_STREAM_IDLE_MS: integer(10_000, 1),
  ARBOR_HTTP2_SESSION_IDLE_MS: integer(60_000, 1),
  ARBOR_HTTP2_SESSION_MAX_BYTES: integer(16 * 1024 * 1024, 64 * 1024),
  ARBOR_GRPC_HEALTH_WATCH_MAX: integer(1_000, 1),
  ARBOR_CONSOLE_DIR: z.string().optional(),
  // Only unset, `development` or `test` may be a development run (see `devSignIn`).
  NODE_ENV: z.string().optional(),
  // Set by Kubernetes in every pod: the shutdown delay applies there.
  KUBERNETES_SERVICE_HOST: z.string().optional(),
  // The CLI's (`arbor auth login`): where the API is.
  ARBOR_API_URL: url.optional(),
  // The reconciler's (src/reconciler/reconciler-config.ts).
  ARBOR_WATCH_NAMESPACE: z.string().optional(),
  POD_NAMESPACE: text('arbor-system'),
  POD_NAME: z.string().optional(),
  ARBOR_LEASE_NAME: text('arbor-reconciler'),
  ARBOR_LEADER_ELECTION: flag(true),
  ARBOR_CLUSTER_TRUST: flag(true),
  ARBOR_RESYNC_SECONDS: integer(600, 10),
  ARBOR_RECONCILE_WORKERS: integer(4, 1),
  ARBOR_RECONCILE_RATE: integer(20, 1),
  ARBOR_RECONCILER_HEALTH_PORT: port(8081),
  ARBOR_RECONCILER_ADMIN_NAMESPACES: names,
  // Cost budgets (docs/operations.md, "Budgets"): ARBOR_BUDGETS and ARBOR_BUDGET_<CLASS>[_ORG].
  ...budgetVariables,
});

export type Environment = z.output<typeof environmentSchema>;

/** Values never repeated in an error message. */
const SECRET = new Set([
  'ARBOR_ADMIN_TOKEN',
  'DATABASE_URL',
  'DATABASE_READ_URL',
  'DATABASE_LISTEN_URL',
  'ARBOR_SECRET_KEY',
  'ARBOR_REGISTRY_NOTIFY_TOKEN',
]);

/**
 * Parses every variable of {@link environmentSchema} out of `env`.
 * @throws ConfigError naming the first variable at fault, e.g. `LOG_LEVEL must be one of …`.
 */
export function parseEnvironment(env: NodeJS.ProcessEnv = process.env): Environment {
  const present: Record<string, string> = {};
  for (const name of Object.keys(environmentSchema.shape)) {
    const v = env[name];
    if (v !== undefined && v !== '') present[name] = v;
  }
  const r = environmentSchema.safeParse(present);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const name = String(issue.path[0]);
  const shown = SECRET.has(name) ? '' : `, not "${present[name]}"`;
  throw new ConfigError(`${name} ${issue.message}${shown}`);
}

function httpLimitsOf(e: Environment): Readonly<HttpLimits> {
  return Object.freeze({
    // Node's own rule: the head cannot be given longer than the whole request.
    headersTimeoutMs: Math.min(e.ARBOR_HTTP_HEADERS_TIMEOUT_MS, e.ARBOR_HTTP_REQUEST_TIMEOUT_MS),
    requestTimeoutMs: e.ARBOR_HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: e.ARBOR_HTTP_KEEP_ALIVE_TIMEOUT_MS,
    maxConcurrentStreams: e.ARBOR_HTTP2_MAX_CONCURRENT_STREAMS,
    streamIdleMs: e.ARBOR_HTTP2_STREAM_IDLE_MS,
    sessionIdleMs: e.ARBOR_HTTP2_SESSION_IDLE_MS,
    sessionMaxBytes: e.ARBOR_HTTP2_SESSION_MAX_BYTES,
  });
}

/** The limits with every variable unset: what a listener built without config holds to. */
export const DEFAULT_HTTP_LIMITS: Readonly<HttpLimits> = httpLimitsOf(parseEnvironment({}));

/** `NODE_ENV` values a development run may have (unset is ''): what tools set on a laptop. */
const DEVELOPMENT_NODE_ENVS: ReadonlySet<string> = new Set(['', 'development', 'test']);

/** See {@link Config.devSignIn}. */
function isDevelopmentRun(e: Environment, inPod: boolean, loginIssuer: string | undefined) {
  return (
    DEVELOPMENT_NODE_ENVS.has(e.NODE_ENV ?? '') &&
    !inPod &&
    e.DATABASE_URL === undefined &&
    e.ARBOR_ADMIN_TOKEN === undefined &&
    loginIssuer === undefined
  );
}

/**
 * A token for a resource server must never be one for Arbor's own API, nor for the
 * registry's token server: its `aud` is what keeps it from being used there.
 */
function checkResourceServers(
  servers: readonly string[],
  issuerUrl: string,
  registryService: string | undefined,
): void {
  const own = [issuerUrl, registryService].flatMap((u) => {
    const c = u === undefined ? undefined : canonicalResourceUri(u);
    return c === undefined ? (u === undefined ? [] : [u]) : [c];
  });
  for (const s of servers)
    if (own.includes(canonicalResourceUri(s)!) || own.includes(s))
      throw new ConfigError(
        `ARBOR_OAUTH_RESOURCE_SERVERS must not name Arbor's own API or registry service, not "${s}"`,
      );
}

/** @throws ConfigError with a message naming the variable at fault. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const e = parseEnvironment(env);
  const dataDir = resolve(e.DATA_DIR);
  const loginIssuer = e.ARBOR_LOGIN_ISSUER?.replace(/\/+$/, '');
  if ((loginIssuer === undefined) !== (e.ARBOR_LOGIN_CLIENT_ID === undefined)) {
    throw new ConfigError('ARBOR_LOGIN_ISSUER and ARBOR_LOGIN_CLIENT_ID are set together');
  }
  if ((e.ARBOR_TLS_CERT_FILE === undefined) !== (e.ARBOR_TLS_KEY_FILE === undefined)) {
    throw new ConfigError('ARBOR_TLS_CERT_FILE and ARBOR_TLS_KEY_FILE are set together');
  }
  const tls =
    e.ARBOR_TLS_CERT_FILE === undefined || e.ARBOR_TLS_KEY_FILE === undefined
      ? undefined
      : Object.freeze({
          certFile: resolve(e.ARBOR_TLS_CERT_FILE),
          keyFile: resolve(e.ARBOR_TLS_KEY_FILE),
        });
  if (e.ARBOR_TLS_TICKET_KEY_FILE !== undefined && tls === undefined) {
    throw new ConfigError('ARBOR_TLS_TICKET_KEY_FILE is set only with ARBOR_TLS_CERT_FILE');
  }
  // With TLS the port answers https only, so the default issuer (and token audience) is too.
  const scheme = tls ? 'https' : 'http';
  const inPod = e.KUBERNETES_SERVICE_HOST !== undefined;
  const issuerUrl = (e.ARBOR_ISSUER_URL ?? `${scheme}://localhost:${e.PORT}`).replace(/\/+$/, '');
  checkResourceServers(e.ARBOR_OAUTH_RESOURCE_SERVERS, issuerUrl, e.ARBOR_REGISTRY_SERVICE);
  const devSignIn = isDevelopmentRun(e, inPod, loginIssuer);
  return Object.freeze({
    port: e.PORT,
    // Its sign-in token is the admin: a development run is reachable from this machine only.
    host: e.HOST ?? (devSignIn ? '127.0.0.1' : '0.0.0.0'),
    databaseUrl: e.DATABASE_URL,
    databaseReadUrls: e.DATABASE_READ_URL,
    readReplicaMaxLagMs: e.ARBOR_READ_REPLICA_MAX_LAG_MS,
    dataDir,
    databasePooler: e.DATABASE_POOLER,
    readCache: e.ARBOR_READ_CACHE,
    databaseListenUrl: e.DATABASE_LISTEN_URL,
    signingKeysDir: resolve(e.ARBOR_SIGNING_KEYS_DIR ?? `${dataDir}/keys`),
    issuerUrl,
    adminToken: e.ARBOR_ADMIN_TOKEN,
    allowInsecureIssuers: e.ARBOR_ALLOW_INSECURE_ISSUERS,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    maxBodyBytes: 1024 * 1024,
    metricsPort: e.METRICS_PORT,
    corsOrigins: Object.freeze(e.ARBOR_CORS_ORIGINS),
    shutdownDelayMs: (e.ARBOR_SHUTDOWN_DELAY_SECONDS ?? (inPod ? 5 : 0)) * 1000,
    shutdownTimeoutMs: e.ARBOR_SHUTDOWN_TIMEOUT_SECONDS * 1000,
    registryService: e.ARBOR_REGISTRY_SERVICE,
    registryNotifyToken: e.ARBOR_REGISTRY_NOTIFY_TOKEN,
    oauthResourceServers: e.ARBOR_OAUTH_RESOURCE_SERVERS,
    loginIssuer,
    loginClientId: e.ARBOR_LOGIN_CLIENT_ID,
    consoleDir: e.ARBOR_CONSOLE_DIR === undefined ? undefined : resolve(e.ARBOR_CONSOLE_DIR),
    maxPeoplePerProvider: e.ARBOR_MAX_PEOPLE_PER_PROVIDER,
    secretKey: e.ARBOR_SECRET_KEY,
    secretKeysDir: resolve(e.ARBOR_SECRET_KEYS_DIR ?? `${dataDir}/secret-keys`),
    allowPrivateSinks: e.ARBOR_ALLOW_PRIVATE_SINKS,
    eventsPollMs: e.ARBOR_EVENTS_POLL_MS,
    eventsLeaseMs: e.ARBOR_EVENTS_LEASE_MS,
    eventsMaxAttempts: e.ARBOR_EVENTS_MAX_ATTEMPTS,
    eventsBackoffMs: e.ARBOR_EVENTS_BACKOFF_MS,
    eventsBackoffMaxMs: e.ARBOR_EVENTS_BACKOFF_MAX_MS,
    eventsSinkTimeoutMs: e.ARBOR_EVENTS_SINK_TIMEOUT_MS,
    eventsConcurrency: e.ARBOR_EVENTS_CONCURRENCY,
    bindingRetentionMs: e.ARBOR_BINDING_RETENTION_SECONDS * 1000,
    bindingSweepMs: e.ARBOR_BINDING_SWEEP_SECONDS * 1000,
    lastUsed: e.ARBOR_LAST_USED,
    lastUsedFlushMs: e.ARBOR_LAST_USED_FLUSH_MS,
    lastUsedResolutionMs: e.ARBOR_LAST_USED_RESOLUTION_MS,
    workers: e.ARBOR_WORKERS,
    tls,
    tlsTickets: Object.freeze({
      rotationMs: e.ARBOR_TLS_TICKET_ROTATION_SECONDS * 1000,
      keyFile:
        e.ARBOR_TLS_TICKET_KEY_FILE === undefined
          ? undefined
          : resolve(e.ARBOR_TLS_TICKET_KEY_FILE),
    }),
    http: httpLimitsOf(e),
    healthWatchMax: e.ARBOR_GRPC_HEALTH_WATCH_MAX,
    budgets: budgetsOf(e),
    devSignIn,
  });
}
