import type { Context, Next } from 'koa';
import { bearerToken, type Authenticator } from '../../auth/authenticator.js';
import type { State } from './request-context.js';

/** Every API route sits behind this: no principal, no service call. */
export function authn(authenticator: Authenticator) {
  return async function authnMiddleware(ctx: Context, next: Next): Promise<void> {
    const token = bearerToken(ctx.get('authorization') || undefined);
    (ctx.state as State).principal = await authenticator.authenticate(token);
    await next();
  };
}

export function principalOf(ctx: Context) {
  const p = (ctx.state as State).principal;
  if (!p) throw new Error('route reached without authentication');
  return p;
}
