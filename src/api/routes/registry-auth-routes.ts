import type { Context } from 'koa';
import { z } from 'zod';
import { constantTimeEquals } from '../../auth/authenticator.js';
import type { Principal } from '../../auth/principal.js';
import type { RegistryCredentials } from '../../resources/registry-auth/registry-credentials.js';
import { Code } from '../../core/rpc-code.js';
import { invalidField, isRpcError, unauthenticated } from '../../core/rpc-error.js';
import {
  registryEventSchema,
  type RegistryEventService,
} from '../../resources/registry-auth/registry-event-service.js';
import type { RegistryTokenService } from '../../resources/registry-auth/registry-token-service.js';
import type { PublicRead } from '../fast-reads.js';
import { readText } from '../middleware/json-body.js';
import { mountOperation, type RouteTarget } from '../openapi/contract.js';
import { EXAMPLE_REGISTRY_SERVICE, EXAMPLE_UIDS } from '../openapi/examples.js';
import { timestampSchema } from '../../wire/time.js';

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

const NO_STORE = { 'Cache-Control': 'no-store' } as const;

/**
 * Clients show a 401 as "login failed"; the challenge tells them to send Basic. Only the
 * credentials fail as UNAUTHENTICATED here (issuing throws INVALID_ARGUMENT or faults).
 */
function challengeOf(e: unknown): Record<string, string> | undefined {
  return isRpcError(e) && e.code === Code.UNAUTHENTICATED
    ? { 'WWW-Authenticate': 'Basic realm="arbor"' }
    : undefined;
}

const tokenResponseSchema = z.object({
  token: z.string(),
  access_token: z.string().meta({ description: 'The same token (OAuth 2 clients read this).' }),
  expires_in: z.int().meta({ description: 'Seconds.' }),
  issued_at: timestampSchema,
});

/** The envelope the registry posts: its events as far as Arbor reads them, others kept. */
const notificationSchema = z.looseObject({ events: z.array(registryEventSchema).max(10_000) });
const outcomeSchema = z.object({ applied: z.int(), ignored: z.int() });

const PUSH_EXAMPLE = {
  events: [
    {
      id: 'a3c5f4b2-7d1e-4f7a-9a55-2b1e8c0d9f10',
      timestamp: '2026-01-31T12:00:00.123456789Z',
      action: 'push',
      target: {
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        digest: `sha256:${'cd'.repeat(32)}`,
        repository: `${EXAMPLE_UIDS.org}/web`,
        tag: 'latest',
      },
    },
  ],
};

/**
 * The token server (Distribution token authentication) and the notification endpoint of
 * a registry that trusts Arbor (spec §5.5). Both sit outside the API's bearer-token
 * authentication: the first takes Basic credentials, the second the registry's secret.
 */
export function mountRegistryAuthRoutes(t: RouteTarget, d: RegistryAuthRouteDeps): void {
  mountTokenServer(t, d);
  if (d.notifyToken !== undefined) mountNotifications(t, d, d.notifyToken);
}

/** `GET /auth/registry/token`, on Koa and on the fast path. */
function mountTokenServer(t: RouteTarget, d: RegistryAuthRouteDeps): void {
  /** The token endpoint, for both REST paths (Koa's route and the fast path). */
  const token: PublicRead = async (authorization, query) => {
    const creds = basicCredentials(authorization);
    const principal: Principal | undefined = creds
      ? await d.credentials.principalOf(creds.username, creds.password)
      : undefined;
    const services = list(query.service);
    if (services.length > 1) throw invalidField('service', 'must be given once');
    const issued = await d.tokens.issue(principal, services[0], list(query.scope));
    return {
      json: JSON.stringify({
        token: issued.token,
        access_token: issued.token,
        expires_in: issued.expiresIn,
        issued_at: issued.issuedAt.toISOString(),
      }),
      headers: NO_STORE,
    };
  };
  mountOperation(
    t,
    {
      method: 'get',
      path: REGISTRY_TOKEN_PATH,
      operationId: 'registry.auth.token',
      summary: 'A registry token for the scopes the caller may have',
      description:
        "The registry's token realm (docs/registry.md). Basic credentials: any user name and " +
        'an Arbor API token as the password, or an identity uid and an OIDC token it accepts; ' +
        'none: anonymous, granted nothing.',
      tags: ['Registry auth'],
      access: 'registryBasic',
      parameters: [
        {
          name: 'service',
          in: 'query',
          description: 'The registry service name (ARBOR_REGISTRY_SERVICE).',
          schema: { type: 'string' },
          example: EXAMPLE_REGISTRY_SERVICE,
        },
        {
          name: 'scope',
          in: 'query',
          explode: true,
          description: 'Scopes such as `repository:<group uid>/<repo>:pull,push`.',
          schema: { type: 'array', items: { type: 'string' } },
          example: [`repository:${EXAMPLE_UIDS.org}/app:pull`],
        },
      ],
      response: {
        status: 200,
        description: 'A token with the access granted.',
        schema: { name: 'RegistryToken', schema: tokenResponseSchema, io: 'output' },
        headers: ['Cache-Control'],
      },
      errors: [400, 401, 500, 503],
    },
    async (ctx: Context) => {
      try {
        const answer = await token(ctx.get('authorization'), ctx.query);
        ctx.set(answer.headers);
        ctx.type = 'application/json';
        ctx.body = answer.json;
      } catch (e) {
        const headers = challengeOf(e);
        if (headers) ctx.set(headers);
        throw e;
      }
    },
  );
  // Every `docker pull` asks here first: served outside Koa too, by the same function.
  t.fast?.registerPublic(REGISTRY_TOKEN_PATH, token, challengeOf);
}

/** `POST /hooks/registry/events`, the registry's notifications, with its bearer secret. */
function mountNotifications(t: RouteTarget, d: RegistryAuthRouteDeps, secret: string): void {
  mountOperation(
    t,
    {
      method: 'post',
      path: REGISTRY_EVENTS_PATH,
      operationId: 'registry.hooks.events',
      summary: "The registry's notifications: pushes and deletes become tags",
      description:
        'Events Arbor cannot place are counted as ignored, not refused, so the registry ' +
        'does not retry them forever.',
      tags: ['Registry auth'],
      access: 'registryNotify',
      requestBody: {
        mediaType: 'application/json',
        schema: { name: 'RegistryNotification', schema: notificationSchema, io: 'input' },
        required: true,
        examples: { example: { summary: 'A tag pushed', value: PUSH_EXAMPLE } },
      },
      response: {
        status: 200,
        description: 'How many events were applied and ignored.',
        schema: { name: 'RegistryNotificationOutcome', schema: outcomeSchema, io: 'output' },
      },
      errors: [400, 401, 413, 500, 503],
    },
    async (ctx: Context) => {
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
    },
  );
}
