import type { Context, Next } from 'koa';

/** A plain object or array: what Koa would serialise as JSON in its `respond`. */
function isJsonValue(body: unknown): body is object {
  if (body === null || typeof body !== 'object') return false;
  if (Array.isArray(body)) return true;
  const proto = Object.getPrototypeOf(body) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Serialises a JSON answer once. Left as an object, the body is stringified by
 * koa-compress (it asks for the length to compare with its threshold, and Koa's length of
 * an object is the byte length of its JSON) and again by Koa's `respond`; on a 50-row list
 * page the second copy was about a tenth of the request's CPU. Sitting inside compression
 * and outside everything that sets a body (routes and the error path), this turns the
 * object into its text once, and both read the string. The Content-Type stays JSON.
 */
export function jsonResponse() {
  return async function jsonResponseMiddleware(ctx: Context, next: Next): Promise<void> {
    await next();
    const body: unknown = ctx.body;
    if (isJsonValue(body)) {
      ctx.type = 'application/json';
      ctx.body = JSON.stringify(body);
    }
  };
}
