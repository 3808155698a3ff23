import type {
  ApiTokenAuthenticator,
  VerifiedApiToken,
} from '../../auth/api-token-authenticator.js';
import { MAX_TOKEN_PARENTS } from '../../auth/api-token-authenticator.js';
import type { Authorizer } from '../../auth/authorizer.js';
import {
  MAX_DELEGATION_DEPTH,
  actClaim,
  liveDelegation,
  type DelegationPolicies,
} from '../../auth/delegation.js';
import { CAPABILITIES, type Capability } from '../../auth/capabilities.js';
import type { Principal, TokenRestriction } from '../../auth/principal.js';
import type { RevokedTokens } from '../../auth/revoked-tokens.js';
import {
  API_TOKEN_TTL_S,
  type Actor,
  type ApiTokenOptions,
  type TokenIssuer,
} from '../../auth/token-issuer.js';
import type { UpstreamClaims } from '../../auth/upstream-claims.js';
import { Code } from '../../core/rpc-code.js';
import { isRpcError } from '../../core/rpc-error.js';
import { isSelfOrBelow, isValidUidp } from '../../core/uidp.js';
import type { NameResolver } from '../names/name-resolver.js';
import type { SecurityTokenService } from '../sts/security-token-service.js';
import type { UnitOfWork } from '../tx.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import {
  API_TOKEN_TYPE,
  issuedTokenV2,
  type IssuedToken as RecordedToken,
} from './issued-token.js';
import { OAuthError } from './oauth-error.js';
import type { ResourceServerTokens } from './resource-server-tokens.js';
import type { RevocationStore } from './revocation-store.js';
import {
  parseTokenRequest,
  single,
  MAX_TOKEN_CHARS,
  TOKEN_TYPE,
  type ActorRequest,
} from './token-request.js';

export interface OAuthServiceDeps {
  uow: UnitOfWork;
  issuer: TokenIssuer;
  sts: SecurityTokenService;
  apiTokens: ApiTokenAuthenticator;
  revoked: RevokedTokens;
  revocations: RevocationStore;
  authz: Authorizer;
  names: Pick<NameResolver, 'group'>;
  /** The live delegation policies (absent: every `actor_token` is refused). */
  delegations?: DelegationPolicies;
  /** Where a revocation is recorded (who revoked which token of which identity). */
  audit?: ChangeRecorder;
  /**
   * Tokens for the other resource servers (`ARBOR_OAUTH_RESOURCE_SERVERS`, RFC 8707 and
   * RFC 9068). Absent: every resource URI but Arbor's API is invalid_target.
   */
  resourceServers?: ResourceServerTokens;
  now?: () => number;
}

/** What the token endpoint answers (RFC 8693 §2.2.1). */
export interface IssuedToken {
  access_token: string;
  issued_token_type: string;
  token_type: 'Bearer';
  expires_in: number;
  scope?: string;
}

/** An introspection answer (RFC 7662 §2.2): `{active:false}` says nothing more. */
export type Introspection = { active: false } | ({ active: true } & Record<string, unknown>);

/** The subject of an exchange: who, how narrowed already, until when, from which tokens. */
interface Subject {
  uid: string;
  act: Actor;
  exp: number;
  restriction: TokenRestriction | undefined;
  parents: string[];
  /** A delegated subject token's chain, carried over to the token issued from it. */
  delegation?: Delegation;
  /** The upstream claims it carries (verified OIDC token, or the subject API token's). */
  claims: UpstreamClaims | undefined;
}

/** A delegated token's actors (current first) and when its delegation began (epoch s). */
interface Delegation {
  actors: readonly string[];
  since: number;
}

/** The actor of an exchange (RFC 8693 §2.1 `actor_token`), verified. */
interface ActorToken {
  /** Its identity, then the actors it acts through itself (a chain). */
  chain: string[];
  exp: number;
  parents: readonly string[];
  delegatedAt: number | undefined;
}

/**
 * The token endpoint's token exchange (RFC 8693), introspection (RFC 7662) and revocation
 * (RFC 7009) of Arbor's API tokens. An exchange never widens: the issued token's
 * capabilities and groups are at most what the subject holds and what was asked, and the
 * authorizer intersects them again on every decision (auth/token-restriction.ts).
 */
export class OAuthService {
  private readonly now: () => number;

  constructor(private readonly d: OAuthServiceDeps) {
    this.now = d.now ?? Date.now;
  }

  /**
   * @throws OAuthError for every refusal (invalid_request, invalid_grant, invalid_scope,
   *   invalid_target, unsupported_grant_type); RpcError UNAVAILABLE or RESOURCE_EXHAUSTED
   *   pass through (the door answers them as temporarily_unavailable).
   */
  async exchange(form: URLSearchParams): Promise<IssuedToken> {
    const req = parseTokenRequest(form, this.d.issuer.audience, this.d.resourceServers?.uris);
    const subject =
      req.subjectKind === 'workload'
        ? await this.workload(req.subjectToken, req.identity)
        : await this.apiToken(req.subjectToken, req.identity);
    const nowS = Math.floor(this.now() / 1000);
    let ttl = Math.min(API_TOKEN_TTL_S, subject.exp - nowS);
    if (ttl < 1) throw new OAuthError('invalid_grant', 'the subject token has expired');
    let { delegation, parents } = subject;
    let ceiling: ReadonlySet<Capability> | undefined;
    if (req.actor !== undefined) {
      const d = await this.delegate(subject, req.actor, nowS);
      ({ delegation, parents, ceiling } = d);
      ttl = Math.min(ttl, d.ttl);
    }
    const sp = identityPrincipal(subject.uid, subject.restriction);
    const groups =
      req.resources === undefined
        ? subject.restriction?.resources
        : await this.groupsOf(sp, req.resources, subject.restriction);
    const carried = subject.restriction?.scope && [...subject.restriction.scope].sort();
    const scope =
      ceiling === undefined
        ? (req.scope ?? carried)
        : await this.delegatedScope(sp, ceiling, req.scope, carried, groups);
    if (req.scope !== undefined) await this.requireScope(sp, req.scope, groups);
    if (req.resources !== undefined && groups !== undefined)
      await this.requireTargets(sp, groups, scope);
    const act = delegation ? actClaim(this.d.issuer.issuer, delegation.actors) : subject.act;
    const sign = (o: ApiTokenOptions) =>
      req.target === undefined
        ? this.d.issuer.sign(subject.uid, act, o)
        : this.d.resourceServers!.sign(req.target, subject.uid, o);
    const { token, expiry } = await sign({
      ...(scope === undefined ? {} : { scope }),
      ...(groups === undefined ? {} : { groups: [...groups] }),
      parents,
      ttlS: ttl,
      ...(delegation === undefined ? {} : { delegation, actor: delegation.actors[0]! }),
      // The subject's claims, never the actor's: a condition reads whom the token is for.
      ...(subject.claims === undefined ? {} : { claims: subject.claims }),
    });
    return {
      access_token: token,
      issued_token_type: TOKEN_TYPE.accessToken,
      token_type: 'Bearer',
      expires_in: Math.max(1, Math.round((expiry.getTime() - this.now()) / 1000)),
      ...(scope === undefined ? {} : { scope: scope.join(' ') }),
    };
  }

  /**
   * RFC 8693 delegation: the actor token verified as a subject token is, and the subject's
   * delegation policy (and, for a chain, each actor's) naming the actor, as the policies
   * are now. @returns the chain, the parents (the subject's and the actor's jtis: revoking
   * either revokes the token), the policy's capabilities and how long it may last.
   * @throws OAuthError invalid_request (a delegated subject, a chain deeper than
   *   MAX_DELEGATION_DEPTH), invalid_grant (an actor token that does not verify, an actor
   *   the policy does not name, a lifetime over).
   */
  private async delegate(
    subject: Subject,
    req: ActorRequest,
    nowS: number,
  ): Promise<{
    delegation: Delegation;
    parents: string[];
    ceiling: ReadonlySet<Capability>;
    ttl: number;
  }> {
    if (subject.delegation !== undefined)
      throw new OAuthError(
        'invalid_request',
        'a delegated token cannot be the subject of another delegation',
      );
    const actor =
      req.kind === 'workload'
        ? await this.workloadActor(req.token, req.identity)
        : await this.apiTokenActor(req.token, req.identity);
    if (actor.chain.length > MAX_DELEGATION_DEPTH)
      throw new OAuthError(
        'invalid_request',
        `a delegation chain is at most ${MAX_DELEGATION_DEPTH} actors deep`,
      );
    const since = Math.min(nowS, actor.delegatedAt ?? nowS);
    const live =
      this.d.delegations &&
      (await liveDelegation(this.d.delegations, subject.uid, actor.chain, since, nowS));
    if (!live)
      throw new OAuthError(
        'invalid_grant',
        "the subject's delegation policy does not let this actor act for it",
      );
    const ttl = Math.min(actor.exp, live.until) - nowS;
    if (ttl < 1) throw new OAuthError('invalid_grant', 'the actor token has expired');
    const parents = [...new Set([...subject.parents, ...actor.parents])];
    if (parents.length > MAX_TOKEN_PARENTS)
      throw new OAuthError('invalid_grant', 'the tokens were exchanged too many times');
    return { delegation: { actors: actor.chain, since }, parents, ceiling: live.capabilities, ttl };
  }

  /** An Arbor API token as the actor: live, and its identity (and chain) the actor. */
  private async apiTokenActor(token: string, identity: string | undefined): Promise<ActorToken> {
    const t = await this.liveToken(token);
    if (t === undefined) throw new OAuthError('invalid_grant', 'the actor token is not valid');
    if (identity !== undefined && identity !== t.uid)
      throw new OAuthError('invalid_grant', "actor_identity is not the actor token's identity");
    return {
      chain: [t.uid, ...(t.restriction?.actors ?? [])],
      exp: t.exp,
      parents: t.revokedBy,
      delegatedAt: t.delegatedAt,
    };
  }

  /** A workload's OIDC token as the actor, judged by the STS's rules for `actor_identity`. */
  private async workloadActor(token: string, identity: string | undefined): Promise<ActorToken> {
    if (identity === undefined)
      throw new OAuthError(
        'invalid_request',
        'actor_identity is required with an OIDC actor token',
      );
    try {
      const { uid, exp } = await this.d.sts.assume(token, identity);
      return { chain: [uid], exp, parents: [], delegatedAt: undefined };
    } catch (e) {
      throw asOAuth(e);
    }
  }

  /**
   * A delegated token's scope: what was asked, each within the policy's `ceiling`
   * (else invalid_scope); without a scope asked, what the policy allows of what the subject
   * holds (`heldOf`).
   */
  private async delegatedScope(
    sp: Principal,
    ceiling: ReadonlySet<Capability>,
    asked: Capability[] | undefined,
    carried: Capability[] | undefined,
    groups: readonly string[] | undefined,
  ): Promise<Capability[]> {
    if (asked === undefined) return this.heldOf(sp, ceiling, carried, groups);
    const beyond = asked.find((c) => !ceiling.has(c));
    if (beyond !== undefined)
      throw new OAuthError('invalid_scope', `${beyond} is beyond the delegation policy`);
    return asked;
  }

  /**
   * The capabilities of `ceiling` (within `carried`, a subject token's own scope) that the
   * subject holds somewhere within `groups`, sorted. @throws OAuthError invalid_scope when
   * none is.
   */
  private async heldOf(
    sp: Principal,
    ceiling: ReadonlySet<Capability>,
    carried: readonly Capability[] | undefined,
    groups: readonly string[] | undefined,
  ): Promise<Capability[]> {
    const within = narrowed(sp, { resources: groups });
    const held: Capability[] = [];
    for (const cap of [...ceiling].sort()) {
      if (carried !== undefined && !carried.includes(cap)) continue;
      const v = await this.d.authz.questions.visibility(within, cap);
      if (v.kind === 'all' || v.scopes.length > 0) held.push(cap);
    }
    if (held.length === 0)
      throw new OAuthError(
        'invalid_scope',
        'the subject holds none of the capabilities its delegation policy allows',
      );
    return held;
  }

  /** The workload's OIDC token, judged by the STS's own rules for the named identity. */
  private async workload(token: string, identity: string | undefined): Promise<Subject> {
    if (identity === undefined)
      throw new OAuthError('invalid_request', 'identity is required with an OIDC subject token');
    try {
      const { uid, act, exp, claims } = await this.d.sts.assume(token, identity);
      return { uid, act, exp, restriction: undefined, parents: [], claims };
    } catch (e) {
      throw asOAuth(e);
    }
  }

  /** An Arbor API token: live, not revoked, and at most MAX_TOKEN_PARENTS exchanges deep. */
  private async apiToken(token: string, identity: string | undefined): Promise<Subject> {
    const t = await this.liveToken(token);
    if (t === undefined) throw new OAuthError('invalid_grant', 'the subject token is not valid');
    if (identity !== undefined && identity !== t.uid)
      throw new OAuthError('invalid_grant', "identity is not the subject token's identity");
    const parents = t.revokedBy.slice(0);
    if (parents.length > MAX_TOKEN_PARENTS)
      throw new OAuthError('invalid_grant', 'the subject token was exchanged too many times');
    const actors = t.restriction?.actors;
    return {
      uid: t.uid,
      act: { iss: this.d.issuer.issuer, sub: t.uid },
      exp: t.exp,
      restriction: t.restriction,
      parents,
      claims: t.claims,
      // A delegated token exchanged again stays delegated: its chain and start carry over.
      ...(actors === undefined ? {} : { delegation: { actors, since: t.delegatedAt ?? 0 } }),
    };
  }

  /** A current, unrevoked API token's claims, or undefined. */
  private async liveToken(token: string): Promise<VerifiedApiToken | undefined> {
    if (token.length > MAX_TOKEN_CHARS) return undefined;
    let t: VerifiedApiToken;
    try {
      t = await this.d.apiTokens.verified(token);
    } catch {
      return undefined;
    }
    if (t.exp * 1000 <= this.now()) return undefined;
    for (const jti of t.revokedBy) if (await this.d.revoked.isRevoked(jti)) return undefined;
    // A delegated token holds what its delegation policies allow now (or nothing).
    const restriction = await this.d.apiTokens.restrictionNow(t, this.now());
    if (restriction === null) return undefined;
    return restriction === t.restriction ? t : { ...t, restriction };
  }

  /**
   * The group uids of `resources` (uids, or paths resolved as the subject sees them),
   * each inside the subject's own groups when it is narrowed already.
   * @throws OAuthError invalid_target, with one message for every reason.
   */
  private async groupsOf(
    sp: Principal,
    resources: string[],
    r: TokenRestriction | undefined,
  ): Promise<string[]> {
    const refuse = (res: string) =>
      new OAuthError('invalid_target', `${res.slice(0, 128)} is outside the subject's grants`);
    const uids: string[] = [];
    for (const res of resources) {
      let uid = res;
      if (!isValidUidp(res)) {
        try {
          uid = (await this.d.names.group(sp, res)).uid;
        } catch (e) {
          if (isRpcError(e) && e.code === Code.UNAVAILABLE) throw e;
          throw refuse(res);
        }
      }
      if (r?.resources !== undefined && !r.resources.some((g) => isSelfOrBelow(g, uid)))
        throw refuse(res);
      uids.push(uid);
    }
    return [...new Set(uids)];
  }

  /**
   * Every capability asked for is held by the subject somewhere within the groups asked
   * for (or anywhere): never a capability it lacks, so a token never names one it could
   * not use. @throws OAuthError invalid_scope.
   */
  private async requireScope(
    sp: Principal,
    scope: readonly Capability[],
    groups: readonly string[] | undefined,
  ): Promise<void> {
    const within = narrowed(sp, { resources: groups });
    for (const cap of scope) {
      const v = await this.d.authz.questions.visibility(within, cap);
      if (v.kind === 'scopes' && v.scopes.length === 0)
        throw new OAuthError('invalid_scope', `the subject does not hold ${cap}`);
    }
  }

  /**
   * Every group asked for is one where the subject holds some capability of the scope
   * (at it, above it or below it). @throws OAuthError invalid_target.
   */
  private async requireTargets(
    sp: Principal,
    groups: readonly string[],
    scope: readonly Capability[] | undefined,
  ): Promise<void> {
    for (const g of groups) {
      const there = narrowed(sp, { resources: [g] });
      let held = false;
      for (const cap of scope ?? CAPABILITIES) {
        const v = await this.d.authz.questions.visibility(there, cap);
        if (v.kind === 'all' || v.scopes.length > 0) {
          held = true;
          break;
        }
      }
      if (!held) throw new OAuthError('invalid_target', `${g} is outside the subject's grants`);
    }
  }

  /**
   * RFC 7662: what `caller` may learn of `token`. Only an API token's holder (the same
   * identity), the admin, or a caller that may list the token's identity learns anything;
   * anyone else, and any token that is unknown, expired or revoked, gets `{active:false}`.
   */
  async introspect(caller: Principal, form: URLSearchParams): Promise<Introspection> {
    const token = requiredToken(form);
    const t = await this.liveToken(token);
    if (t === undefined) return this.introspectResourceToken(caller, token);
    if (!(await this.mayHandle(caller, t, 'identity.list'))) return { active: false };
    const r = t.restriction;
    return {
      active: true,
      token_type: 'Bearer',
      iss: this.d.issuer.issuer,
      aud: this.d.issuer.audience,
      sub: t.uid,
      exp: t.exp,
      ...(t.iat === undefined ? {} : { iat: t.iat }),
      ...(t.jti === undefined ? {} : { jti: t.jti }),
      ...(r?.scope === undefined ? {} : { scope: [...r.scope].sort().join(' ') }),
      ...(r?.resources === undefined ? {} : { arbor_groups: [...r.resources] }),
      ...(r?.actors === undefined ? {} : { act: actClaim(this.d.issuer.issuer, r.actors) }),
    };
  }

  /**
   * RFC 7009: revoke an API token by its jti, for its holder (the same identity), the
   * admin, or a caller that may update the token's identity. A token that does not verify
   * (unknown, expired, not Arbor's) is answered as revoked, as the RFC says.
   * @throws OAuthError invalid_request (no token), unauthorized_client (not the caller's to
   *   revoke), unsupported_token_type (a refresh token: Arbor issues none).
   */
  async revoke(caller: Principal, form: URLSearchParams): Promise<void> {
    const token = requiredToken(form);
    const hint = single(form, 'token_type_hint');
    if (hint === 'refresh_token')
      throw new OAuthError('unsupported_token_type', 'Arbor issues no refresh tokens');
    const t = await this.verifiedAnyToken(token);
    if (t === undefined) return;
    if (t.jti === undefined || t.exp * 1000 <= this.now()) return;
    if (!(await this.mayHandle(caller, t, 'identity.update')))
      throw new OAuthError('unauthorized_client', 'the caller may not revoke this token');
    const jti = t.jti;
    const expiry = new Date(t.exp * 1000);
    await this.d.uow.run(async (tx) => {
      await this.d.revocations.revoke(tx, jti, t.uid, expiry);
      await this.d.audit?.record(tx, caller, {
        type: API_TOKEN_TYPE,
        operation: 'delete',
        uid: t.uid,
        before: issuedTokenV2(revokedRecord(t, jti, expiry)),
      });
    });
    this.d.revoked.forget?.(jti);
  }

  /** The holder of a token is its identity, with any token of its own. */
  private async mayHandle(
    caller: Principal,
    t: VerifiedApiToken,
    cap: Capability,
  ): Promise<boolean> {
    if (caller.kind === 'identity' && caller.uid === t.uid) return true;
    return this.d.authz.can(caller, cap, t.uid);
  }

  /** RFC 7662 for a resource server's token, by the rule for API tokens. */
  private async introspectResourceToken(caller: Principal, token: string): Promise<Introspection> {
    const v = await this.d.resourceServers?.live(token);
    if (v === undefined || !(await this.mayHandle(caller, v.token, 'identity.list')))
      return { active: false };
    return this.d.resourceServers!.introspection(v);
  }

  /**
   * Introspection by a resource server holding nothing of Arbor's but the token it was
   * given: a live token for a configured resource server, sent as the bearer credential
   * and as `token` alike, learns what it says of itself and that it is still live (not
   * revoked, its delegation still allowed). Nothing else introspects this way.
   * @returns undefined when this is not such a call (the door then refuses the caller).
   */
  async introspectOwn(bearer: string, form: URLSearchParams): Promise<Introspection | undefined> {
    const token = requiredToken(form);
    if (token !== bearer) return undefined;
    const v = await this.d.resourceServers?.live(token);
    return v && this.d.resourceServers!.introspection(v);
  }

  /** An API token's claims, or a resource server's token's, verified (revoked or not). */
  private async verifiedAnyToken(token: string): Promise<VerifiedApiToken | undefined> {
    try {
      return await this.d.apiTokens.verified(token);
    } catch {
      return this.d.resourceServers?.verified(token);
    }
  }
}

/** A revoked token as its audit record shows it (the token's claims; never the token). */
function revokedRecord(t: VerifiedApiToken, jti: string, expiry: Date): RecordedToken {
  const parents = t.revokedBy.slice(1);
  const r = t.restriction;
  return {
    jti,
    identityUid: t.uid,
    parentJti: parents[0] ?? null,
    ancestors: parents,
    actor: null,
    scope: r?.scope === undefined ? null : [...r.scope].sort(),
    groups: r?.resources === undefined ? null : [...r.resources],
    issueTime: new Date((t.iat ?? t.exp) * 1000),
    expireTime: expiry,
  };
}

function requiredToken(form: URLSearchParams): string {
  const token = single(form, 'token', MAX_TOKEN_CHARS);
  if (token === undefined) throw new OAuthError('invalid_request', 'token is required');
  return token;
}

function identityPrincipal(uid: string, r: TokenRestriction | undefined): Principal {
  return Object.freeze({ kind: 'identity', uid, ...(r === undefined ? {} : { restriction: r }) });
}

/** `p` further narrowed to `groups` (within any groups it is narrowed to already). */
function narrowed(p: Principal, o: { resources: readonly string[] | undefined }): Principal {
  if (p.kind !== 'identity' || o.resources === undefined) return p;
  return identityPrincipal(p.uid, { ...p.restriction, resources: o.resources });
}

/** The STS's refusals as the token endpoint's: a bad subject is invalid_grant. */
function asOAuth(e: unknown): unknown {
  if (!isRpcError(e)) return e;
  if (e.code === Code.INVALID_ARGUMENT) return new OAuthError('invalid_request', e.message);
  if (e.code === Code.UNAUTHENTICATED || e.code === Code.PERMISSION_DENIED)
    return new OAuthError('invalid_grant', e.message);
  return e;
}
