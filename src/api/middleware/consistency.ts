import type { Middleware } from 'koa';
import { CONSISTENCY_HEADER, withConsistency } from '../../resources/consistency.js';

/**
 * The consistency token of a REST request (docs/operations.md, "Read replicas"): the
 * client's `Arbor-Consistency-Token` goes into the request's scope, and a request whose
 * writes earned a token (only with read replicas configured) answers with it.
 */
export function consistency(): Middleware {
  return (ctx, next) =>
    withConsistency(ctx.get(CONSISTENCY_HEADER) || undefined, async (scope) => {
      await next();
      if (scope.written !== undefined) ctx.set(CONSISTENCY_HEADER, scope.written);
    });
}
