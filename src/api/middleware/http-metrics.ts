import type { Context, Next } from 'koa';
import type { ApiMetrics } from '../../metrics/api-metrics.js';

/**
 * Counts and times every request by the route template that matched (never the raw path,
 * whose uids would make a series per resource), method and final status. Outermost, so
 * the status is the one the client got.
 */
export function httpMetrics(metrics: ApiMetrics) {
  return async function httpMetricsMiddleware(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    try {
      await next();
    } finally {
      const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
      const labels = {
        route: typeof matched === 'string' ? matched : '(unmatched)',
        method: ctx.method,
        code: String(ctx.status),
      };
      metrics.httpRequests.inc(labels);
      metrics.observe(metrics.httpDuration, labels, (performance.now() - started) / 1000);
    }
  };
}
