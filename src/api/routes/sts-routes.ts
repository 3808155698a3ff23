import type Router from '@koa/router';
import type { Context } from 'koa';
import { bearerToken } from '../../auth/authenticator.js';
import type { SecurityTokenService } from '../../auth/sts.js';
import type { TokenIssuer } from '../../auth/token-issuer.js';
import type { UserSignIn } from '../../auth/user-sign-in.js';
import { invalidField } from '../../core/rpc-error.js';
import { readText } from '../middleware/json-body.js';

function values(v: string | string[] | null | undefined): string[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

/** The STS (spec §4.7) and the OIDC discovery documents of Arbor's own issuer. */
export function mountStsRoutes(
  router: Router,
  sts: SecurityTokenService,
  issuer: TokenIssuer,
  people?: UserSignIn,
): void {
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
  router.get('/sts/exchange', (ctx) => exchange(ctx, undefined));
  router.post('/sts/exchange', async (ctx) => {
    const type = ctx.get('content-type');
    const text = await readText(ctx, 64 * 1024);
    if (text !== '' && !/^application\/x-www-form-urlencoded\b/i.test(type)) {
      throw invalidField('body', 'must be form-encoded (application/x-www-form-urlencoded)');
    }
    await exchange(ctx, new URLSearchParams(text));
  });

  router.get('/.well-known/openid-configuration', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = {
      issuer: issuer.issuer,
      jwks_uri: `${issuer.issuer}/.well-known/jwks.json`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
      claims_supported: ['iss', 'sub', 'aud', 'iat', 'exp', 'act'],
    };
  });
  router.get('/.well-known/jwks.json', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = issuer.jwks();
  });
}
