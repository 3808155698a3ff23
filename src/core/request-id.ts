import { randomUUID } from 'node:crypto';

/** A client's request id is kept only when it is short and plain (it lands in the audit trail). */
const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The request id of a call: the caller's `x-request-id` when it is one plain token, else a
 * fresh one. Every door (REST, its fast reads, gRPC) names its requests by this one rule.
 */
export function requestIdOf(incoming: unknown): string {
  return typeof incoming === 'string' && SAFE_ID.test(incoming) ? incoming : randomUUID();
}
