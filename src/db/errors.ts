import { INSTANT_RANGE_PROBLEM } from '../core/instant.js';
import { Code } from '../core/rpc-code.js';
import { RpcError, invalidField, isRpcError, unavailable } from '../core/rpc-error.js';

/** SQLSTATE classes and driver errors that mean "the database cannot be reached right now". */
const UNAVAILABLE_SQLSTATE = /^(08|53|57P0[1-3])/;
const UNAVAILABLE_ERRNO = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
]);

export function sqlState(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** 23505: a unique constraint refused the row (a name or a binding that is taken). */
export function isUniqueViolation(e: unknown): boolean {
  return sqlState(e) === '23505';
}

/**
 * 23503: a foreign key refused the write: an insert names a parent that is not there, or a
 * delete takes a row that others still name.
 */
export function isForeignKeyViolation(e: unknown): boolean {
  return sqlState(e) === '23503';
}

/** 40001 (serialization failure) and 40P01 (deadlock detected): safe to run again. */
export function isConflict(e: unknown): boolean {
  const state = sqlState(e);
  return state === '40001' || state === '40P01';
}

/** 25006: a read-only transaction, i.e. the server under this connection is now a standby. */
export function isReadOnlyTransaction(e: unknown): boolean {
  return sqlState(e) === '25006';
}

export function constraintOf(e: unknown): string | undefined {
  const c = (e as { constraint?: unknown } | null)?.constraint;
  return typeof c === 'string' ? c : undefined;
}

/**
 * Translate what the driver threw into the service taxonomy. Errors the stores did not
 * anticipate stay as they are, so that the front door logs them and answers INTERNAL
 * without showing SQL to anyone.
 */
export function translateDbError(e: unknown): unknown {
  if (isRpcError(e)) return e;
  const state = sqlState(e);
  if (state !== undefined) {
    if (UNAVAILABLE_SQLSTATE.test(state))
      return wrap(unavailable('the database is unavailable'), e);
    if (isConflict(e)) {
      return wrap(new RpcError(Code.ABORTED, 'Aborted: concurrent update, try again'), e);
    }
    if (state === '55P03' || state === '57014') return wrap(unavailable('the database is busy'), e);
    // 25006, read-only transaction: the server under this connection was demoted to a
    // standby (a failover); the pool drops the connection (multi-host.ts), a retry finds
    // the new primary.
    if (isReadOnlyTransaction(e)) return wrap(unavailable('the database is unavailable'), e);
    // Class 22, data exception: a value the database cannot take (bytes it cannot encode,
    // a number out of range, a malformed escape in jsonb). The caller sent it; the
    // validators should have refused it first, and this is the net under them.
    if (state.startsWith('22')) {
      return wrap(invalidField('body', 'contains a value the service cannot store'), e);
    }
    // 23514 on migration 0025's range checks: a time outside 0001-01-01 … 9999-12-31 that a
    // validator let through. The net under the input schemas, answered as they would.
    if (state === '23514' && /_in_range$/.test(constraintOf(e) ?? '')) {
      return wrap(invalidField('body', INSTANT_RANGE_PROBLEM), e);
    }
    return e;
  }
  const errno = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : '';
  if (
    (typeof errno === 'string' && UNAVAILABLE_ERRNO.has(errno)) ||
    /Timeout acquiring a connection|Connection terminated|connection is closed|Client has encountered a connection error|Client was closed|PGlite is closed/i.test(
      message,
    )
  ) {
    return wrap(unavailable('the database is unavailable'), e);
  }
  return e;
}

function wrap(err: RpcError, cause: unknown): RpcError {
  (err as { cause?: unknown }).cause = cause;
  return err;
}
