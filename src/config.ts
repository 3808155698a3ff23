import { resolve } from 'node:path';

/** Typed, frozen configuration, read from the environment once at start-up. */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  /** Directory of the token-signing keys (`*.jwk.json`); generated when empty. */
  signingKeysDir: string;
  issuerUrl: string;
  adminToken: string | undefined;
  allowInsecureIssuers: boolean;
  logLevel: string;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes: number;
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
}

export class ConfigError extends Error {}

function bool(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === '') return false;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, not "${raw}"`);
}

function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) {
    throw new ConfigError(`${name} must be a positive integer, not "${raw}"`);
  }
  return n;
}

/** @throws ConfigError with a message naming the variable at fault. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const port = env.PORT ? Number(env.PORT) : 8080;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`PORT must be a port number, not "${env.PORT}"`);
  }
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// URL');
  }
  const issuerUrl = (env.ARBOR_ISSUER_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    new URL(issuerUrl);
  } catch {
    throw new ConfigError(`ARBOR_ISSUER_URL must be a URL, not "${issuerUrl}"`);
  }
  const adminToken = env.ARBOR_ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && adminToken.length < 16) {
    throw new ConfigError('ARBOR_ADMIN_TOKEN must be at least 16 characters');
  }
  const dataDir = resolve(env.DATA_DIR || './.data');
  return Object.freeze({
    port,
    host: env.HOST || '0.0.0.0',
    databaseUrl,
    dataDir,
    signingKeysDir: resolve(env.ARBOR_SIGNING_KEYS_DIR || `${dataDir}/keys`),
    issuerUrl,
    adminToken,
    allowInsecureIssuers: bool('ARBOR_ALLOW_INSECURE_ISSUERS', env.ARBOR_ALLOW_INSECURE_ISSUERS),
    logLevel: env.LOG_LEVEL || 'info',
    maxBodyBytes: 1024 * 1024,
    allowPrivateSinks: bool('ARBOR_ALLOW_PRIVATE_SINKS', env.ARBOR_ALLOW_PRIVATE_SINKS),
    eventsPollMs: positiveInt('ARBOR_EVENTS_POLL_MS', env.ARBOR_EVENTS_POLL_MS, 1_000),
    eventsLeaseMs: positiveInt('ARBOR_EVENTS_LEASE_MS', env.ARBOR_EVENTS_LEASE_MS, 30_000),
    eventsMaxAttempts: positiveInt('ARBOR_EVENTS_MAX_ATTEMPTS', env.ARBOR_EVENTS_MAX_ATTEMPTS, 15),
    eventsBackoffMs: positiveInt('ARBOR_EVENTS_BACKOFF_MS', env.ARBOR_EVENTS_BACKOFF_MS, 1_000),
    eventsBackoffMaxMs: positiveInt(
      'ARBOR_EVENTS_BACKOFF_MAX_MS',
      env.ARBOR_EVENTS_BACKOFF_MAX_MS,
      300_000,
    ),
  });
}
