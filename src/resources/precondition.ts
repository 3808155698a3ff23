import { RequestScope } from '../core/request-scope.js';
import { RpcError } from '../core/rpc-error.js';
import { Code } from '../core/rpc-code.js';

/**
 * A write's precondition, set by a front door around one service call (HTTP `If-Match`)
 * and enforced by the unit of work inside the service's own transaction: the first
 * transaction the call opens takes a transaction-scoped lock on the resource's uid (so
 * conditional writers of one resource queue up), then asks `current()` — reading through
 * that same transaction — for the resource's entity tag, and fails the write when it is
 * not one the client named. No service needs to know.
 */
export interface Precondition {
  /** The resource the write is about. */
  readonly uid: string;
  /** Entity tags the client accepts (`*`: any existing version); undefined: only lock. */
  readonly ifMatch: readonly string[] | undefined;
  /** The resource's entity tag now, read within the transaction. */
  current(): Promise<string>;
  /** Set by the unit of work once enforced, so a second transaction does not repeat it. */
  enforced?: boolean;
}

const scope = new RequestScope<Precondition>();

/** Run `fn` (one service call) under `pre`. */
export function withPrecondition<T>(pre: Precondition, fn: () => Promise<T>): Promise<T> {
  return scope.run(pre, fn);
}

/** The precondition of the service call in progress, if any and not yet enforced. */
export function pendingPrecondition(): Precondition | undefined {
  const pre = scope.get();
  return pre && !pre.enforced ? pre : undefined;
}

/**
 * FAILED_PRECONDITION for an `If-Match` that names another version; HTTP answers it 412
 * (more precise than the gateway mapping's 400 for code 9, like 405 and 413 elsewhere).
 */
export function etagMismatch(uid: string): RpcError {
  return new RpcError(
    Code.FAILED_PRECONDITION,
    'Precondition failed: the resource has changed since it was read (If-Match does not match its ETag)',
    [
      {
        '@type': 'type.googleapis.com/google.rpc.PreconditionFailure',
        violations: [{ type: 'ETAG', subject: uid, description: 'If-Match does not match' }],
      },
    ],
    412,
  );
}
