import type {
  ApiTokenAuthenticator,
  VerifiedApiToken,
} from '../../auth/api-token-authenticator.js';
import { actClaim } from '../../auth/delegation.js';
import type {
  ResourceAccessTokens,
  VerifiedResourceToken,
} from '../../auth/resource-access-tokens.js';
import type { RevokedTokens } from '../../auth/revoked-tokens.js';
import { API_TOKEN_TTL_S, type ApiTokenOptions } from '../../auth/token-issuer.js';

export interface ResourceServerTokensDeps {
  /** `ARBOR_OAUTH_RESOURCE_SERVERS`, as configured (RFC 8707 resource indicators). */
  uris: readonly string[];
  tokens: ResourceAccessTokens;
  revoked: RevokedTokens;
  /** A delegated token's restriction as its delegation policies allow now. */
  apiTokens: Pick<ApiTokenAuthenticator, 'restrictionNow'>;
  now?: () => number;
}

/**
 * The token endpoint's tokens for the other resource servers (RFC 8707, RFC 9068;
 * docs/oauth-clients.md): issued from the same exchange as an API token, and live by the
 * same rules (not expired, no jti of theirs or their parents' revoked, a delegation still
 * allowed), but only ever for their `aud`, never for Arbor's API.
 */
export class ResourceServerTokens {
  private readonly now: () => number;

  constructor(private readonly d: ResourceServerTokensDeps) {
    this.now = d.now ?? Date.now;
  }

  get uris(): readonly string[] {
    return this.d.uris;
  }

  /**
   * A token for `resource` (as configured) with what an API token from this exchange would
   * hold (`o`), and `client_id` who asked: the current actor when delegated, else the
   * subject. Arbor authenticates no OAuth clients, so a form's `client_id` is never believed.
   */
  sign(resource: string, subject: string, o: ApiTokenOptions) {
    const actors = o.delegation?.actors;
    return this.d.tokens.sign(resource, subject, {
      clientId: actors?.[0] ?? subject,
      ttlS: o.ttlS ?? API_TOKEN_TTL_S,
      ...(o.scope === undefined ? {} : { scope: o.scope }),
      ...(o.groups === undefined ? {} : { groups: o.groups }),
      ...(o.parents === undefined ? {} : { parents: o.parents }),
      ...(actors === undefined
        ? {}
        : { act: actClaim(this.d.tokens.issuer, actors), delegation: o.delegation }),
    });
  }

  /** The claims of a token of ours for a configured resource server, revoked or not. */
  async verified(token: string): Promise<VerifiedApiToken | undefined> {
    return (await this.d.tokens.verify(token, this.d.uris))?.token;
  }

  /** A live token of ours for a configured resource server, or undefined. */
  async live(token: string): Promise<VerifiedResourceToken | undefined> {
    const v = await this.d.tokens.verify(token, this.d.uris);
    if (v === undefined) return undefined;
    const t = v.token;
    if (t.exp * 1000 <= this.now()) return undefined;
    for (const jti of t.revokedBy) if (await this.d.revoked.isRevoked(jti)) return undefined;
    const restriction = await this.d.apiTokens.restrictionNow(t, this.now());
    if (restriction === null) return undefined;
    return restriction === t.restriction ? v : { ...v, token: { ...t, restriction } };
  }

  /** RFC 7662 §2.2's answer for a live token (RFC 9068's claims, as the token has them). */
  introspection(v: VerifiedResourceToken): { active: true } & Record<string, unknown> {
    const t = v.token;
    const r = t.restriction;
    return {
      active: true,
      token_type: 'Bearer',
      iss: this.d.tokens.issuer,
      aud: v.aud,
      sub: t.uid,
      client_id: v.clientId,
      exp: t.exp,
      ...(t.iat === undefined ? {} : { iat: t.iat }),
      ...(t.jti === undefined ? {} : { jti: t.jti }),
      ...(r?.scope === undefined ? {} : { scope: [...r.scope].sort().join(' ') }),
      ...(r?.resources === undefined ? {} : { arbor_groups: [...r.resources] }),
      ...(r?.actors === undefined ? {} : { act: actClaim(this.d.tokens.issuer, r.actors) }),
    };
  }
}
