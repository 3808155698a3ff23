import type { Context, Next } from 'koa';
import type { Attributes } from '@opentelemetry/api';
import { requestIdOf } from '../../core/request-id.js';
import { endServerSpan, startServerSpan, within } from '../../tracing/spans.js';
import type { State } from './request-context.js';

/**
 * The HTTP server span of a request Koa answers (the fast reads make the same one), named
 * and described by the semantic conventions: `{method} {http.route}`, or just `{method}`
 * for a request no route matched. Outermost, so the metrics and everything after run in
 * it; the request id is decided here and kept for requestContext. Installed only while
 * tracing is on: without it the chain is what it always was.
 */
export function traceRequest() {
  return async function traceRequestMiddleware(ctx: Context, next: Next): Promise<void> {
    const requestId = requestIdOf(ctx.get('x-request-id'));
    (ctx.state as State).requestId = requestId;
    const span = startServerSpan(ctx.method, ctx.req.headers, requestId, () =>
      httpServerAttributes(ctx.method, ctx.path, ctx.req.socket.remoteAddress),
    );
    let failed = true;
    try {
      await within(span, next);
      failed = ctx.status >= 500;
    } finally {
      const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      const route = typeof matched === 'string' ? matched : undefined;
      endServerSpan(
        span,
        () => ({
          'http.response.status_code': ctx.status,
          ...(route === undefined ? {} : { 'http.route': routeOf(route) }),
        }),
        failed,
        route === undefined ? ctx.method : httpSpanName(ctx.method, route),
      );
    }
  };
}

/** The request attributes of an HTTP server span (semantic conventions, HTTP server). */
export function httpServerAttributes(
  method: string,
  path: string,
  peer: string | undefined,
): Attributes {
  return {
    'http.request.method': method,
    'url.path': path,
    ...(peer === undefined ? {} : { 'network.peer.address': peer }),
  };
}

/**
 * A route template as the semantic conventions want it (`/iam/v2beta1/access:check`), from
 * the router's spelling, which escapes a literal colon (`access\:check`).
 */
export function routeOf(template: string): string {
  return template.replace(/\\:/g, ':');
}

/**
 * An HTTP server span's name for a request a route matched (semantic conventions:
 * `{method} {http.route}`), from the router's template: Koa's and the fast reads' alike.
 */
export function httpSpanName(method: string, template: string): string {
  return `${method} ${routeOf(template)}`;
}
