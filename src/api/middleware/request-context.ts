import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { requestIdOf } from '../../core/request-id.js';
import { Code, httpStatusOf } from '../../core/rpc-code.js';
import { RpcError, asRpcError, retryAfterOf, type RpcStatus } from '../../core/rpc-error.js';
import type { Principal } from '../../auth/principal.js';

export interface State {
  requestId: string;
  log: Logger;
  principal?: Principal;
}

/**
 * The one error path: every failure, from a route, the router (404/405) or a parser,
 * leaves as a google.rpc.Status. Faults are logged with the request id and answered as
 * INTERNAL with nothing of them shown.
 */
export function requestContext(logger: Logger) {
  return async function requestContextMiddleware(ctx: Context, next: Next): Promise<void> {
    // traceRequest, when tracing is on, has decided it already (its span carries it).
    const requestId =
      (ctx.state as Partial<State>).requestId ?? requestIdOf(ctx.get('x-request-id'));
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
      const answer = errorAnswerOf(e, log);
      ctx.status = answer.status;
      ctx.body = answer.body;
      // A spent budget says when to come back, in the header clients and proxies read too.
      const retry = retryAfterOf(answer.body);
      if (retry !== undefined) ctx.set('Retry-After', String(retry));
    } finally {
      logRequest(logger, log, ctx.method, ctx.path, ctx.status, started, state.principal);
    }
  };
}

/**
 * A failure as REST answers it (core's `asRpcError`, with the HTTP status of its code or
 * its own). Shared by both REST paths: this middleware and the fast reads.
 */
export function errorAnswerOf(e: unknown, log: () => Logger): { status: number; body: RpcStatus } {
  const err = asRpcError(e, log);
  return { status: err.httpStatus ?? httpStatusOf(err.code), body: err.toStatus() };
}

/** The access log line of one request, at info. */
export function logRequest(
  logger: Logger,
  log: () => Logger,
  method: string,
  path: string,
  status: number,
  started: number,
  principal: Principal | undefined,
): void {
  if (!logger.isLevelEnabled('info')) return;
  log().info(
    {
      method,
      path,
      status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      principal: principal?.kind,
    },
    'request',
  );
}
