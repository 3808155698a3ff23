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
  /** The container registry's service name (`aud` of its tokens); unset → no token server. */
  registryService: string | undefined;
  /** Bearer token the registry sends with its notifications; unset → no notification endpoint. */
  registryNotifyToken: string | undefined;
  /** The server-level OIDC provider people sign in with (spec §5.2); unset → none. */
  loginIssuer: string | undefined;
  loginClientId: string | undefined;
  /** ARBOR_SECRET_KEY: base64 AES-256 keys sealing secrets at rest, newest first. */
  secretKey: string | undefined;
  /** Where generated secret keys live when ARBOR_SECRET_KEY is unset. */
  secretKeysDir: string;
}

export class ConfigError extends Error {}

function bool(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === '') return false;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false, not "${raw}"`);
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
    ...registryConfig(env),
    ...loginConfig(env),
    secretKey: env.ARBOR_SECRET_KEY || undefined,
    secretKeysDir: resolve(env.ARBOR_SECRET_KEYS_DIR || `${dataDir}/secret-keys`),
  });
}

/** The container registry that trusts Arbor's tokens (spec §5.5). */
function registryConfig(
  env: NodeJS.ProcessEnv,
): Pick<Config, 'registryService' | 'registryNotifyToken'> {
  const registryNotifyToken = env.ARBOR_REGISTRY_NOTIFY_TOKEN || undefined;
  if (registryNotifyToken !== undefined && registryNotifyToken.length < 16) {
    throw new ConfigError('ARBOR_REGISTRY_NOTIFY_TOKEN must be at least 16 characters');
  }
  return { registryService: env.ARBOR_REGISTRY_SERVICE || undefined, registryNotifyToken };
}

/** The server-level login provider: both variables or neither. */
function loginConfig(env: NodeJS.ProcessEnv): Pick<Config, 'loginIssuer' | 'loginClientId'> {
  const loginIssuer = env.ARBOR_LOGIN_ISSUER?.replace(/\/+$/, '') || undefined;
  const loginClientId = env.ARBOR_LOGIN_CLIENT_ID || undefined;
  if ((loginIssuer === undefined) !== (loginClientId === undefined)) {
    throw new ConfigError('ARBOR_LOGIN_ISSUER and ARBOR_LOGIN_CLIENT_ID are set together');
  }
  if (loginIssuer !== undefined && !URL.canParse(loginIssuer)) {
    throw new ConfigError(`ARBOR_LOGIN_ISSUER must be a URL, not "${loginIssuer}"`);
  }
  return { loginIssuer, loginClientId };
}
