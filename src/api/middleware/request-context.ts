import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { Code, httpStatusOf } from '../../core/rpc-code.js';
import { RpcError, internal, isRpcError } from '../../core/rpc-error.js';
import type { Principal } from '../../auth/principal.js';

export interface State {
  requestId: string;
  log: Logger;
  principal?: Principal;
}

const SAFE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The one error path: every failure, from a route, the router (404/405) or a parser,
 * leaves as a google.rpc.Status. Faults are logged with the request id and answered as
 * INTERNAL with nothing of them shown.
 */
export function requestContext(logger: Logger) {
  return async function requestContextMiddleware(ctx: Context, next: Next): Promise<void> {
    const incoming = ctx.get('x-request-id');
    const requestId = SAFE_ID.test(incoming) ? incoming : randomUUID();
    // The request's child logger is made on first use: at LOG_LEVEL=warn a request that
    // ends well never needs one (pino's child() serialises its bindings every time).
    let child: Logger | undefined;
    const log = () => (child ??= logger.child({ requestId }));
    const state = ctx.state as State;
    state.requestId = requestId;
    Object.defineProperty(state, 'log', { get: log, enumerable: true, configurable: true });
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        // What the router left unanswered still leaves as a google.rpc.Status.
        if (ctx.status === 404) {
          throw new RpcError(
            Code.NOT_FOUND,
            `Not found: no route for ${ctx.method} ${ctx.path}`,
            [],
            404,
          );
        }
        if (ctx.status === 405 || ctx.status === 501) {
          const why = `${ctx.method} is not supported on ${ctx.path}`;
          // A method the router does not know (501 there) is the caller's choice, not a
          // fault of ours: 405 like a known one, so that 5xx always means a real fault.
          throw new RpcError(Code.UNIMPLEMENTED, `Unimplemented: ${why}`, [], 405);
        }
      }
    } catch (e) {
      let err: RpcError;
      if (isRpcError(e)) {
        err = e;
        if ((e as { cause?: unknown }).cause)
          log().warn({ err: (e as { cause?: unknown }).cause }, 'dependency failure');
      } else {
        log().error({ err: e }, 'unhandled error');
        err = internal();
      }
      ctx.status = err.httpStatus ?? httpStatusOf(err.code);
      ctx.body = err.toStatus();
    } finally {
      if (logger.isLevelEnabled('info'))
        log().info(
          {
            method: ctx.method,
            path: ctx.path,
            status: ctx.status,
            ms: Math.round((performance.now() - started) * 10) / 10,
            principal: state.principal?.kind,
          },
          'request',
        );
    }
  };
}
