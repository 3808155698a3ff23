/**
 * A start-up failure the operator can fix (a port taken, a database out of reach): the CLI
 * prints its message alone, without a stack, and exits 1. Messages name the variable to
 * change and never carry a password.
 */
export class StartupError extends Error {}

/** `url` without its password (and without a query, which may hold one too). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    u.search = '';
    return u.toString();
  } catch {
    // A multi-host URL (`h1:5432,h2:5432`) is no WHATWG URL: redact its password by hand.
    const m = /^(postgres(?:ql)?:\/\/)(?:([^:@/]*)(:[^@/]*)?@)?([^/?#]*)([^?#]*)/.exec(url);
    if (m?.[4]?.includes(',')) {
      const auth = m[2] === undefined ? '' : `${m[2]}${m[3] === undefined ? '' : ':***'}@`;
      return `${m[1]}${auth}${m[4]}${m[5]}`;
    }
    return '(an unparseable URL)';
  }
}

const LISTEN_WHY: Record<string, string> = {
  EADDRINUSE: 'is in use by another process',
  EACCES: 'needs privileges this process lacks',
  EADDRNOTAVAIL: 'names an address this machine does not have',
};

/**
 * What `listen` threw, as the variable that chose the port: `PORT 8080 is in use …`.
 * Anything that is not a listen failure is returned unchanged.
 */
export function listenFailure(e: Error, variable: string, port: number, host: string): Error {
  const code = (e as NodeJS.ErrnoException).code;
  const why = code === undefined ? undefined : LISTEN_WHY[code];
  if (why === undefined) return e;
  return new StartupError(
    `${variable}=${port} (on ${host}) ${why}: choose another port with ${variable}` +
      (variable === 'METRICS_PORT' ? ', or 0 to turn the metrics listener off' : ''),
  );
}

/** Error codes of a database that cannot be reached or refuses this login (SQLSTATE 28*, 3D000). */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '28000',
  '28P01',
  '3D000',
  // No host of a multi-host DATABASE_URL would take writes (src/db/multi-host.ts).
  '08001',
]);

/**
 * A failure to reach or log in to PostgreSQL, as a message naming `DATABASE_URL` without its
 * password; anything else is returned unchanged.
 */
export function databaseFailure(e: unknown, url: string | undefined): unknown {
  if (url === undefined || !(e instanceof Error)) return e;
  const code = (e as NodeJS.ErrnoException).code;
  const timedOut = e.name === 'KnexTimeoutError';
  if (!timedOut && (code === undefined || !UNREACHABLE.has(code))) return e;
  // Node reports a refused `localhost` (both ::1 and 127.0.0.1) as an AggregateError.
  const detail = e.message !== '' ? e.message : e instanceof AggregateError ? String(code) : e.name;
  return new StartupError(
    `cannot use the database at DATABASE_URL=${redactUrl(url)}: ${timedOut ? 'no connection within the timeout' : detail}`,
  );
}
