import { createHash } from 'node:crypto';
import type { Context, Next } from 'koa';
import { bearerToken, type Authenticator } from '../../auth/authenticator.js';
import { withVia } from '../../auth/principal.js';
import type { State } from './request-context.js';

/** Every API route sits behind this: no principal, no service call. */
export function authn(authenticator: Authenticator) {
  return async function authnMiddleware(ctx: Context, next: Next): Promise<void> {
    const token = bearerToken(ctx.get('authorization') || undefined);
    const state = ctx.state as State;
    // The request context rides with the principal into the audit trail: the door, the
    // request id, and a fingerprint of the token (never the token itself).
    state.principal = withVia(await authenticator.authenticate(token), {
      door: 'rest',
      requestId: state.requestId,
      credential: createHash('sha256').update(token).digest('hex').slice(0, 16),
    });
    await next();
  };
}

export function principalOf(ctx: Context) {
  const p = (ctx.state as State).principal;
  if (!p) throw new Error('route reached without authentication');
  return p;
}
