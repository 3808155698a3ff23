import type Router from '@koa/router';
import type { Context } from 'koa';
import { constantTimeEquals } from '../../auth/authenticator.js';
import type { Principal } from '../../auth/principal.js';
import type { RegistryCredentials } from '../../auth/registry-credentials.js';
import { Code } from '../../core/rpc-code.js';
import { invalidField, isRpcError, unauthenticated } from '../../core/rpc-error.js';
import type { RegistryEventService } from '../../resources/registry-auth/registry-event-service.js';
import type { RegistryTokenService } from '../../resources/registry-auth/registry-token-service.js';
import { readText } from '../middleware/json-body.js';

/** Where the registry's `auth.token.realm` points, and where its notifications go. */
export const REGISTRY_TOKEN_PATH = '/auth/registry/token';
export const REGISTRY_EVENTS_PATH = '/hooks/registry/events';

export interface RegistryAuthRouteDeps {
  credentials: RegistryCredentials;
  tokens: RegistryTokenService;
  events: RegistryEventService;
  /** The bearer token the registry's notification endpoint sends; unset → no endpoint. */
  notifyToken: string | undefined;
  bodyLimit: number;
}

function list(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** `Basic base64(user:password)`, or undefined when no Authorization header was sent. */
function basicCredentials(header: string): { username: string; password: string } | undefined {
  if (header === '') return undefined;
  const m = /^Basic +([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m?.[1]) throw unauthenticated('the token server takes Basic credentials');
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw unauthenticated('the token server takes Basic credentials');
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * The token server (Distribution token authentication) and the notification endpoint of
 * a registry that trusts Arbor (spec §5.5). Both sit outside the API's bearer-token
 * authentication: the first takes Basic credentials, the second the registry's secret.
 */
export function mountRegistryAuthRoutes(router: Router, d: RegistryAuthRouteDeps): void {
  router.get(REGISTRY_TOKEN_PATH, async (ctx: Context) => {
    let principal: Principal | undefined;
    try {
      const creds = basicCredentials(ctx.get('authorization'));
      if (creds) principal = await d.credentials.principalOf(creds.username, creds.password);
    } catch (e) {
      // Clients show the 401 as "login failed"; the challenge tells them to send Basic.
      if (isRpcError(e) && e.code === Code.UNAUTHENTICATED)
        ctx.set('WWW-Authenticate', 'Basic realm="arbor"');
      throw e;
    }
    const services = list(ctx.query.service);
    if (services.length > 1) throw invalidField('service', 'must be given once');
    const t = await d.tokens.issue(principal, services[0], list(ctx.query.scope));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      token: t.token,
      access_token: t.token,
      expires_in: t.expiresIn,
      issued_at: t.issuedAt.toISOString(),
    };
  });

  if (d.notifyToken === undefined) return;
  const secret = d.notifyToken;
  router.post(REGISTRY_EVENTS_PATH, async (ctx: Context) => {
    const m = /^Bearer +(\S+)\s*$/i.exec(ctx.get('authorization'));
    if (!m?.[1] || !constantTimeEquals(m[1], secret))
      throw unauthenticated('the notification token is not valid');
    const text = await readText(ctx, d.bodyLimit);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw invalidField('body', 'is not valid JSON');
    }
    ctx.body = await d.events.apply(body);
  });
}
