import type { Context, Next } from 'koa';
import { authenticateRequest, type Authenticator } from '../../auth/authenticator.js';
import type { State } from './request-context.js';

/** Every API route sits behind this: no principal, no service call. */
export function authn(authenticator: Authenticator) {
  return async function authnMiddleware(ctx: Context, next: Next): Promise<void> {
    const state = ctx.state as State;
    state.principal = await authenticateRequest(
      authenticator,
      ctx.get('authorization') || undefined,
      'rest',
      state.requestId,
    );
    await next();
  };
}
export function principalOf(ctx: Context) {
  const p = (ctx.state as State).principal;
  if (!p) throw new Error('route reached without authentication');
  return p;
}
