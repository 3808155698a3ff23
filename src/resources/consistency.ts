import { RequestScope } from '../core/request-scope.js';

/**
 * The consistency token of one API request (docs/operations.md, "Read replicas"): the
 * token the client sent back, if any, and the token the request's writes earned. A front
 * door opens the scope around one service call, reading the request header (or gRPC
 * metadata) `Arbor-Consistency-Token` into `requested` and answering `written` in the same
 * header; the unit of work fills `written` after each commit and routes replica reads by
 * `requested`. Only db/ knows what a token means: here it is an opaque string.
 *
 * Reads outside any scope (the reconciler, the delivery worker, the CLI) never go to a
 * replica: only requests that can carry a token back are served from one.
 */
export interface ConsistencyScope {
  /** The client's token, verbatim (malformed ones are the unit of work's to ignore). */
  readonly requested: string | undefined;
  /** The newest token a write of this request committed with; unset when it wrote nothing. */
  written: string | undefined;
}

/** The header (HTTP) and metadata key (gRPC, lower case there) of the token. */
export const CONSISTENCY_HEADER = 'Arbor-Consistency-Token';

const scope = new RequestScope<ConsistencyScope>();

/**
 * Whether any database of this process has read replicas or a change feed (the read cache).
 * Until one does, scopes are not entered: nothing reads them, and a scope costs every
 * promise of its request (on Node 20, Node's promise hooks while any scope is open:
 * core/request-scope.ts). Never turned off again: a second database without either in the
 * same process only pays for the first one's.
 */
let entered = false;

/** Called when a database with read replicas or a change feed is opened (compose). */
export function enableConsistencyScopes(): void {
  entered = true;
}

/**
 * Run `fn` (one request's service call) in a scope; `fn` reads `written` when it is done.
 * `readOnly`: the call writes nothing, so without a client token its scope would hold
 * nothing anyone reads, and none is entered (entering one costs the hot Get measurably).
 */
export function withConsistency<T>(
  requested: string | undefined,
  fn: (s: ConsistencyScope) => Promise<T>,
  readOnly = false,
): Promise<T> {
  const s: ConsistencyScope = { requested: requested || undefined, written: undefined };
  return entered && !(readOnly && s.requested === undefined) ? scope.run(s, () => fn(s)) : fn(s);
}

/** The scope of the request in progress, if a door opened one. */
export function consistencyScope(): ConsistencyScope | undefined {
  return scope.get();
}
