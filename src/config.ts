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
  /** `ARBOR_WORKERS`: processes serving the API (`arbor serve`); unset → one per core. */
  workers: number | undefined;
}

export class ConfigError extends Error {}

function bool(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === '') return false;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, not "${raw}"`);
}

function workersOf(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 256)
    throw new ConfigError(`ARBOR_WORKERS must be a whole number from 1 to 256, not "${raw}"`);
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
    workers: workersOf(env.ARBOR_WORKERS),
  });
}
