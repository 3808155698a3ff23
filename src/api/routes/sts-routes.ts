import { z } from 'zod';
import type { Context } from 'koa';
import { bearerToken } from '../../auth/authenticator.js';
import type { SecurityTokenService } from '../../resources/sts/security-token-service.js';
import type { TokenIssuer } from '../../auth/token-issuer.js';
import type { UserSignIn } from '../../resources/users/user-sign-in.js';
import { invalidField } from '../../core/rpc-error.js';
import { readText } from '../middleware/json-body.js';
import { mountOperation, type OperationContract, type RouteTarget } from '../openapi/contract.js';
import { EXAMPLE_API_URL, EXAMPLE_UIDS } from '../openapi/examples.js';
import { timestampSchema } from '../../wire/time.js';
import { discoveryOperation } from './discovery-operation.js';

function values(v: string | string[] | null | undefined): string[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

const AUD = "Arbor's address (ARBOR_ISSUER_URL), or the registry service name.";
const IDENTITY = "The identity to assume; without it, a person's own user identity.";

/** What the STS reads, from the query or a form body alike. */
const exchangeRequestSchema = z.object({
  aud: z.union([z.string(), z.array(z.string())]).meta({ description: AUD }),
  identity: z.string().optional().meta({ description: IDENTITY }),
});

export const exchangeResponseSchema = z.object({
  token: z.string().meta({ description: 'The API token: a JWT for one hour.' }),
  expiry: timestampSchema,
});

const openIdConfigurationSchema = z.looseObject({
  issuer: z.string(),
  jwks_uri: z.string(),
  response_types_supported: z.array(z.string()),
  subject_types_supported: z.array(z.string()),
  id_token_signing_alg_values_supported: z.array(z.string()),
  claims_supported: z.array(z.string()),
});

const jwksSchema = z.object({ keys: z.array(z.looseObject({ kty: z.string() })) });

/** The upstream token is the credential: no Arbor token, so none of the API's security. */
const EXCHANGE = {
  path: '/sts/exchange',
  tags: ['STS'],
  access: 'public',
  description:
    "Send the workload's OIDC token (or a person's ID token) as `Authorization: Bearer`; " +
    "it must match the identity's claimMatch (spec §4.7, §5). The answer is never cached.",
  response: {
    status: 200,
    description: 'An Arbor API token.',
    schema: { name: 'ExchangeResponse', schema: exchangeResponseSchema, io: 'output' },
    headers: ['Cache-Control'],
  },
  errors: [400, 401, 403, 404, 500, 503],
} as const satisfies Partial<OperationContract>;

const example = { aud: EXAMPLE_API_URL, identity: EXAMPLE_UIDS.identity };

/** The STS (spec §4.7) and the OIDC discovery documents of Arbor's own issuer. */
export function mountStsRoutes(
  t: RouteTarget,
  sts: SecurityTokenService,
  issuer: TokenIssuer,
  people?: UserSignIn,
): void {
  mountExchange(t, sts, people);
  mountDiscovery(t, issuer);
}

/** `/sts/exchange`, by query (GET) or form (POST). */
function mountExchange(t: RouteTarget, sts: SecurityTokenService, people?: UserSignIn): void {
  const exchange = async (ctx: Context, form: URLSearchParams | undefined) => {
    const upstream = bearerToken(ctx.get('authorization') || undefined);
    const aud = [...values(ctx.query.aud), ...(form?.getAll('aud') ?? [])];
    const ids = [...values(ctx.query.identity), ...(form?.getAll('identity') ?? [])];
    if (ids.length > 1) throw invalidField('identity', 'must be given once');
    // Without `identity`, a person signs in as their own user identity (spec §5.2).
    const { token, expiry } =
      ids[0] === undefined && people
        ? await people.exchange(upstream, aud)
        : await sts.exchange(upstream, { aud, identity: ids[0] });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { token, expiry: expiry.toISOString() };
  };
  mountOperation(
    t,
    {
      ...EXCHANGE,
      method: 'get',
      operationId: 'sts.exchange',
      summary: 'Exchange an OIDC token for an API token',
      parameters: [
        {
          name: 'aud',
          in: 'query',
          required: true,
          explode: true,
          description: AUD,
          schema: { type: 'array', items: { type: 'string' } },
          example: [example.aud],
        },
        {
          name: 'identity',
          in: 'query',
          description: IDENTITY,
          schema: { type: 'string' },
          example: example.identity,
        },
      ],
    },
    (ctx) => exchange(ctx, undefined),
  );
  mountOperation(
    t,
    {
      ...EXCHANGE,
      method: 'post',
      operationId: 'sts.exchangeForm',
      summary: 'Exchange an OIDC token for an API token (form body)',
      requestBody: {
        mediaType: 'application/x-www-form-urlencoded',
        schema: { name: 'ExchangeRequest', schema: exchangeRequestSchema, io: 'input' },
        required: true,
        examples: { example: { summary: 'Assume an identity', value: example } },
      },
    },
    async (ctx) => {
      const type = ctx.get('content-type');
      const text = await readText(ctx, 64 * 1024);
      if (text !== '' && !/^application\/x-www-form-urlencoded\b/i.test(type)) {
        throw invalidField('body', 'must be form-encoded (application/x-www-form-urlencoded)');
      }
      await exchange(ctx, new URLSearchParams(text));
    },
  );
}

/** The OIDC discovery document of Arbor's issuer and the keys that sign API tokens. */
function mountDiscovery(t: RouteTarget, issuer: TokenIssuer): void {
  mountOperation(
    t,
    discoveryOperation(
      '/.well-known/openid-configuration',
      'discovery.openidConfiguration',
      "The OIDC discovery document of Arbor's issuer",
      openIdConfigurationSchema,
      'OpenIdConfiguration',
    ),
    (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = {
        issuer: issuer.issuer,
        jwks_uri: `${issuer.issuer}/.well-known/jwks.json`,
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['ES256'],
        claims_supported: ['iss', 'sub', 'aud', 'iat', 'exp', 'act'],
      };
    },
  );
  mountOperation(
    t,
    discoveryOperation(
      '/.well-known/jwks.json',
      'discovery.jwks',
      'The public keys that sign API tokens',
      jwksSchema,
      'JsonWebKeySet',
    ),
    (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = issuer.jwks();
    },
  );
}
