import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors, type JWTPayload } from 'jose';
import { verifyJws, verifyJwt } from '../../auth/compact-jws.js';
import type { UsageRecorder } from '../../auth/usage-recorder.js';
import { Code } from '../../core/rpc-code.js';
import {
  invalidField,
  isRpcError,
  permissionDenied,
  RpcError,
  unauthenticated,
} from '../../core/rpc-error.js';
import { isValidUidp } from '../../core/uidp.js';
import { claimMatchAccepts, issuerProblem } from '../identities/claim-match.js';
import { issuerPatternLiteral, MAX_MATCHED_CLAIM_LENGTH } from '../identities/claim-pattern.js';
import { explainClaimMatch, shown, type ClauseResult } from '../identities/claim-explain.js';
import type { Identity } from '../identities/identity.js';
import { ISSUER_UNAVAILABLE, type RemoteKeySets } from '../../auth/remote-key-sets.js';
import { explainLifetime, livesTooLong } from './token-lifetime.js';
import {
  UPSTREAM_CLAIMS_CLAIM,
  carriedClaims,
  claimsObject,
  type UpstreamClaims,
} from '../../auth/upstream-claims.js';
import {
  API_TOKEN_TTL_S,
  CLOCK_SKEW_S,
  TOKEN_USE,
  type Actor,
  type TokenIssuer,
} from '../../auth/token-issuer.js';

/** Asymmetric algorithms only: `none` and HMAC (key-confusion) are refused outright. */
export const UPSTREAM_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'EdDSA',
];
/** Generous for real OIDC tokens (1–6 KB), and below Node's 16 KB header limit. */
export const MAX_UPSTREAM_TOKEN_BYTES = 8 * 1024;

/** What the STS needs of identities, without a principal: it runs before one exists. */
export interface ExchangeIdentities {
  getForExchange(uid: string): Promise<Identity | undefined>;
  touchLastSeen(uid: string): Promise<void>;
}

/**
 * The provider a person's identity belongs to (`Identity.signInProvider`), as configured
 * now: undefined when it is gone. Only a token it issued for its client assumes the person.
 */
export interface PersonProviders {
  providerOf(ref: string): Promise<{ issuer: string; clientId: string } | undefined>;
}

export interface StsOptions {
  /** Accept `http://` issuers (ARBOR_ALLOW_INSECURE_ISSUERS). */
  allowInsecureIssuers?: boolean;
  /** Resolves people's providers; without it, a person's identity cannot be named. */
  people?: PersonProviders;
  /**
   * Where an exchange records the identity as used (written in the background, batched);
   * absent: the exchange writes lastSeenTime itself, at most once a minute per identity.
   */
  usage?: UsageRecorder;
  now?: () => number;
}

export interface ExchangeRequest {
  aud: string[];
  identity: string | undefined;
}

const DENIED = 'the token may not assume this identity';
const LAST_SEEN_RESOLUTION_MS = 60_000;

/**
 * The security token service (spec §4.7, §5): verifies a workload's OIDC token against the
 * one identity it names and, if its claims match, issues a one-hour Arbor API token.
 */
export class SecurityTokenService {
  readonly #touched = new Map<string, number>();
  readonly #otherAudiences = new Set<string>();
  private readonly now: () => number;
  private readonly allowInsecure: boolean;
  private readonly people: PersonProviders | undefined;
  private readonly usage: UsageRecorder | undefined;

  constructor(
    private readonly identities: ExchangeIdentities,
    private readonly keys: RemoteKeySets,
    private readonly issuer: TokenIssuer,
    o: StsOptions = {},
  ) {
    this.now = o.now ?? Date.now;
    this.allowInsecure = o.allowInsecureIssuers ?? false;
    this.people = o.people;
    this.usage = o.usage;
  }

  /**
   * @throws RpcError INVALID_ARGUMENT (aud, identity), UNAUTHENTICATED (a token that does not
   *   verify, or lives over 24 h), PERMISSION_DENIED (a token the identity does not accept),
   *   UNAVAILABLE (the issuer's keys cannot be had, one message for every reason).
   */
  async exchange(upstream: string, req: ExchangeRequest): Promise<{ token: string; expiry: Date }> {
    const auds = req.aud
      .flatMap((a) => a.split(','))
      .map((a) => a.trim().replace(/\/+$/, ''))
      .filter(Boolean);
    const audience = this.audienceOf(auds);
    const { uid, act, claims } = await this.assume(upstream, req.identity);
    if (audience !== this.issuer.audience) return this.signForOther(audience, uid, act, claims);
    return this.issuer.sign(uid, act, { claims });
  }

  /**
   * The exchange's judgement without a token issued: whether `upstream` may assume the
   * identity `identityUid`, by exactly the rules of `exchange` (the token endpoint's
   * token exchange calls this, and signs its own narrower token). Records the identity as
   * seen, as an exchange does.
   * @returns the identity, the upstream token as the actor, the upstream's `exp`, and the
   *   claims of the verified token an API token carries (auth/upstream-claims.ts).
   * @throws RpcError as `exchange` (INVALID_ARGUMENT names `identity`).
   */
  async assume(
    upstream: string,
    identityUid: string | undefined,
  ): Promise<{ uid: string; act: Actor; exp: number; claims: UpstreamClaims }> {
    const req = { identity: identityUid };
    if (!req.identity || !isValidUidp(req.identity))
      throw invalidField('identity', 'must be the uid of an identity');
    if (upstream.length > MAX_UPSTREAM_TOKEN_BYTES) throw unauthenticated('the token is too large');

    let alg: string | undefined;
    let unverified: JWTPayload;
    try {
      alg = decodeProtectedHeader(upstream).alg;
      unverified = decodeJwt(upstream);
    } catch {
      throw unauthenticated('the token is not a JWT');
    }
    if (!alg || !UPSTREAM_ALGORITHMS.includes(alg))
      throw unauthenticated(`algorithm ${alg ?? 'none'} is not accepted`);
    const iss = unverified.iss;
    if (typeof iss !== 'string' || iss === '') throw unauthenticated('the token has no issuer');
    if (iss === this.issuer.issuer) throw unauthenticated('Arbor API tokens cannot be exchanged');
    // Nothing else of an unverified token is looked at until its issuer is a plain URL.
    if (issuerProblem(iss, this.allowInsecure) !== undefined)
      throw unauthenticated("the token's issuer is not an issuer URL");

    const identity = await this.identities.getForExchange(req.identity);
    // The issuer must be one the named identity trusts before any key is fetched for it.
    if (!identity || !issuerAllowedUnverified(identity, iss, this.now(), this.allowInsecure))
      throw permissionDenied(DENIED);
    // A person's identity: the same rule as their sign-in, only their provider vouches.
    const client = await this.personClient(identity, iss);

    const payload = identity.staticKeys
      ? await this.verifyStatic(upstream, identity)
      : await this.verifyRemote(upstream, iss);
    requireBoundedLifetime(payload, this.now());

    if (!claimsAccepted(identity, payload, client ?? this.issuer.audience, client !== undefined))
      throw permissionDenied(DENIED);
    await this.touch(identity.uid);
    const act: Actor = {
      iss,
      sub: String(payload.sub),
      ...(payload.aud === undefined ? {} : { aud: payload.aud }),
    };
    // jose's jwtVerify has required a numeric exp. Only the verified payload is carried.
    return { uid: identity.uid, act, exp: payload.exp!, claims: carriedClaims(payload) };
  }

  /**
   * Also issue tokens for `audience` (the container registry's service name, §5.5) when
   * an exchange asks for it. The upstream token's own audience rules do not change.
   */
  acceptAudience(audience: string): void {
    this.#otherAudiences.add(audience.replace(/\/+$/, ''));
  }

  /**
   * The exchange's judgement of `claims` for `target`, clause by clause, with no token
   * issued and nothing recorded (no lastSeenTime, no sign-in): the claim tester. With
   * `token` (whose payload `claims` must be), also whether its signature verifies against
   * the identity's keys, found exactly as an exchange finds them; keys are fetched only
   * for an issuer the identity trusts, as in an exchange.
   */
  async dryRun(
    target: DryRunTarget,
    claims: Readonly<Record<string, unknown>>,
    token?: string,
    fetchKeys = true,
  ): Promise<ClauseResult[]> {
    const now = this.now();
    const iss = claims.iss;
    const gate = await this.issuerGate(target, iss, now);
    const clauses = target.staticKeys
      ? explainStaticKeys(target.staticKeys, claims)
      : explainClaimMatch(target.claimMatch ?? {}, claims);
    const client = gate.client;
    const out = clauses.map((c) => {
      if (c.clause === 'issuer' && gate.problem !== undefined && c.passed)
        return { ...c, passed: false, reason: gate.problem };
      if (c.clause === 'audience') return this.audienceClause(target, c, claims.aud, client);
      return c;
    });
    // After issuer, subject and audience, before any further claims.
    out.splice(3, 0, explainLifetime(claims, now));
    if (token !== undefined)
      out.push(await this.signatureClause(target, token, iss, gate, fetchKeys));
    return out;
  }

  /** The exchange's checks on an unverified `iss` before any key is fetched for it. */
  private async issuerGate(
    target: DryRunTarget,
    iss: unknown,
    now: number,
  ): Promise<{ problem?: string; client?: string }> {
    if (typeof iss !== 'string' || iss === '') return { problem: 'the token has no issuer (iss)' };
    if (iss === this.issuer.issuer)
      return { problem: 'Arbor API tokens cannot be exchanged (iss is this server)' };
    if (issuerProblem(iss, this.allowInsecure) !== undefined)
      return { problem: `iss ${shown(iss)} is not an issuer URL` };
    const asIdentity = target as Identity;
    if (!issuerAllowedUnverified(asIdentity, iss, now, this.allowInsecure)) {
      if (target.staticKeys && target.staticKeys.expirationTime.getTime() <= now)
        return { problem: "the identity's static keys have expired" };
      return { problem: `iss ${shown(iss)} is not an issuer this identity trusts` };
    }
    try {
      const client = await this.personClient(asIdentity, iss);
      return client === undefined ? {} : { client };
    } catch (e) {
      // Only personClient's own refusal is a verdict on the issuer. Anything else (the
      // database out of reach) fails the call as what it is, never as a wrong issuer.
      if (!isRpcError(e) || e.code !== Code.PERMISSION_DENIED) throw e;
      return { problem: "iss is not the issuer of this person's sign-in provider" };
    }
  }

  /** The audience clause with the exchange's default: the token must name Arbor (or the person's client). */
  private audienceClause(
    target: DryRunTarget,
    c: ClauseResult,
    aud: unknown,
    client: string | undefined,
  ): ClauseResult {
    const auds = Array.isArray(aud) ? (aud as unknown[]) : aud === undefined ? [] : [aud];
    const mustName = client ?? this.issuer.audience;
    const named = target.claimMatch?.audience !== undefined && client === undefined;
    if (named || !c.passed) return c;
    const passed = auds.includes(mustName);
    return {
      clause: 'audience',
      passed,
      reason: `expected aud to hold ${shown(mustName)}${
        client ? " (the person's sign-in client)" : ' (this server)'
      }, saw ${shown(aud)}`,
    };
  }

  private async signatureClause(
    target: DryRunTarget,
    token: string,
    iss: unknown,
    gate: { problem?: string },
    fetchKeys: boolean,
  ): Promise<ClauseResult> {
    const no = (reason: string): ClauseResult => ({ clause: 'signature', passed: false, reason });
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      return no('the token is not a JWT');
    }
    if (!alg || !UPSTREAM_ALGORITHMS.includes(alg))
      return no(`algorithm ${shown(alg ?? 'none')} is not accepted`);
    // As in an exchange: no key is fetched for an issuer the identity does not trust.
    if (gate.problem !== undefined || typeof iss !== 'string')
      return no('not checked: the issuer is not one this identity trusts');
    if (!fetchKeys && !target.staticKeys)
      return no(
        "not checked: an unsaved claim match's issuer keys are fetched only for callers who may create identities",
      );
    try {
      if (target.staticKeys) await this.verifyStatic(token, target, false);
      else await this.verifyRemote(token, iss, false);
      return {
        clause: 'signature',
        passed: true,
        reason: target.staticKeys
          ? "verifies with the identity's static keys"
          : "verifies with the issuer's published keys",
      };
    } catch (e) {
      // By code and type: an error's message carries its code's prefix, never equal to these.
      if (isRpcError(e) && e.code === Code.UNAVAILABLE) return no(ISSUER_UNAVAILABLE);
      if (e instanceof NoMatchingKey) return no(NO_MATCHING_KEY);
      return no('the token signature does not verify');
    }
  }

  /** The one audience asked for: the API's, or one added by `acceptAudience`. */
  private audienceOf(auds: string[]): string {
    const allowed = [this.issuer.audience, ...this.#otherAudiences].join(' or ');
    if (auds.length === 0) throw invalidField('aud', `is required and must be ${allowed}`);
    const first = auds[0]!;
    const known = first === this.issuer.audience || this.#otherAudiences.has(first);
    if (!known || auds.some((a) => a !== first)) throw invalidField('aud', `must be ${allowed}`);
    return first;
  }

  /** A registry-login token carries the upstream claims too: the token server reads them. */
  private async signForOther(
    audience: string,
    uid: string,
    act: Actor,
    claims: UpstreamClaims,
  ): Promise<{ token: string; expiry: Date }> {
    const { token, expiry } = await this.issuer.signFor(
      TOKEN_USE.registryLogin,
      audience,
      uid,
      { act, ...(claims.size === 0 ? {} : { [UPSTREAM_CLAIMS_CLAIM]: claimsObject(claims) }) },
      API_TOKEN_TTL_S,
    );
    return { token, expiry };
  }

  /**
   * For a person's identity, the client id its provider issues tokens to (the token must
   * name it in `aud`); undefined for a workload identity.
   * @throws RpcError PERMISSION_DENIED when the provider is gone or has another issuer.
   */
  private async personClient(identity: Identity, iss: string): Promise<string | undefined> {
    if (identity.signInProvider === undefined) return undefined;
    const provider = await this.people?.providerOf(identity.signInProvider);
    const trim = (u: string) => u.replace(/\/+$/, '');
    if (!provider || trim(provider.issuer) !== trim(iss)) throw permissionDenied(DENIED);
    return provider.clientId;
  }

  /**
   * lastSeenTime is kept to the minute: one write per identity per minute, however many
   * workloads exchange tokens for it.
   */
  private async touch(uid: string): Promise<void> {
    const now = this.now();
    if (this.usage !== undefined) return this.usage.identityUsed(uid, now);
    const last = this.#touched.get(uid);
    if (last !== undefined && now - last < LAST_SEEN_RESOLUTION_MS) return;
    if (this.#touched.size >= 10_000) this.#touched.clear();
    this.#touched.set(uid, now);
    await this.identities.touchLastSeen(uid);
  }

  private async verifyStatic(
    token: string,
    identity: Pick<Identity, 'staticKeys'>,
    claims = true,
  ): Promise<JWTPayload> {
    const keys = createLocalJWKSet(JSON.parse(identity.staticKeys!.issuerKeys) as { keys: [] });
    try {
      return await this.verify(token, keys, identity.staticKeys!.issuer, claims);
    } catch (e) {
      if (e instanceof UnknownKey) throw new NoMatchingKey();
      throw e;
    }
  }

  private async verifyRemote(token: string, iss: string, claims = true): Promise<JWTPayload> {
    try {
      return await this.verify(token, await this.keys.resolver(iss), iss, claims);
    } catch (e) {
      if (!(e instanceof UnknownKey)) throw e;
      // A kid we have not seen: the issuer may have rotated. Refetch (rate-limited) once.
      try {
        return await this.verify(token, await this.keys.resolver(iss, true), iss, claims);
      } catch (again) {
        if (again instanceof UnknownKey) throw new NoMatchingKey();
        throw again;
      }
    }
  }

  /** `claims` false: the signature alone (the claim tester judges the claims itself). */
  private async verify(
    token: string,
    keys: ReturnType<typeof createLocalJWKSet>,
    iss: string,
    claims: boolean,
  ): Promise<JWTPayload> {
    try {
      if (!claims) {
        await verifyJws(token, keys, UPSTREAM_ALGORITHMS);
        return decodeJwt(token);
      }
      const { payload } = await verifyJwt(token, keys, {
        issuer: iss,
        algorithms: UPSTREAM_ALGORITHMS,
        clockTolerance: CLOCK_SKEW_S,
        requiredClaims: ['iss', 'sub', 'exp'],
        currentDate: new Date(this.now()),
      });
      return payload;
    } catch (e) {
      if (e instanceof errors.JWKSNoMatchingKey) throw new UnknownKey();
      throw unauthenticated(reason(e));
    }
  }
}

class UnknownKey extends Error {}

const NO_MATCHING_KEY = 'no key of the issuer matches the token';

/** UNAUTHENTICATED, typed: the issuer publishes no key the token names. */
class NoMatchingKey extends RpcError {
  constructor() {
    super(Code.UNAUTHENTICATED, unauthenticated(NO_MATCHING_KEY).message);
  }
}

/** What the claim tester judges a token against: a stored identity or an unsaved claim match. */
export type DryRunTarget = Pick<Identity, 'claimMatch' | 'staticKeys' | 'signInProvider'>;

/** An identity with static keys: its issuer and subject exactly (the audience is the server's). */
function explainStaticKeys(
  sk: NonNullable<Identity['staticKeys']>,
  claims: Readonly<Record<string, unknown>>,
): ClauseResult[] {
  return explainClaimMatch({ issuer: sk.issuer, subject: sk.subject }, claims);
}

/**
 * Refuse a verified upstream token that lives longer than a workload or login token should:
 * over 24 hours from `iat` (or from now, when it has none) to `exp`.
 * @throws RpcError UNAUTHENTICATED for a token valid for more than 24 hours.
 */
export function requireBoundedLifetime(payload: JWTPayload, nowMs: number): void {
  // jose has checked that exp is present and numeric; iat is optional in OIDC.
  if (livesTooLong(payload.exp!, payload.iat, nowMs / 1000))
    throw unauthenticated('the token is valid for more than 24 hours');
}

function reason(e: unknown): string {
  if (e instanceof errors.JWTExpired) return 'the token has expired';
  if (e instanceof errors.JWTClaimValidationFailed)
    return `the token's ${e.claim} claim is not acceptable`;
  if (e instanceof errors.JWSSignatureVerificationFailed)
    return 'the token signature does not verify';
  return 'the token is not valid';
}

/**
 * Whether the identity trusts the *unverified* `iss`, judged only by comparison with exact,
 * bounded values: the identity's issuer, or the literal `https://host/` that its issuer
 * pattern begins with. The pattern itself runs later, on the verified claim; here it only
 * decides which origin discovery may be fetched from, and that origin is the identity's.
 */
function issuerAllowedUnverified(
  identity: Identity,
  iss: string,
  now: number,
  allowInsecure: boolean,
): boolean {
  if (identity.staticKeys)
    return identity.staticKeys.issuer === iss && identity.staticKeys.expirationTime.getTime() > now;
  const cm = identity.claimMatch;
  if (!cm) return false;
  if (cm.issuer !== undefined) return cm.issuer === iss;
  if (cm.issuerPattern === undefined || iss.length > MAX_MATCHED_CLAIM_LENGTH) return false;
  // A pattern stored before origins had to be fixed yields no literal: it accepts nothing.
  const fixed = issuerPatternLiteral(cm.issuerPattern, allowInsecure);
  if (!fixed) return false;
  if (fixed.complete) return iss === fixed.literal;
  // The token picks the rest of the path: it must be in canonical form, so that no dot
  // segment, backslash or escape makes the discovery URL differ from the text compared.
  const url = new URL(iss);
  const canonical = url.href === iss || url.href === `${iss}/`;
  return canonical && iss.startsWith(fixed.literal) && url.origin === new URL(fixed.literal).origin;
}

/**
 * The claims of a verified token against the identity. When the identity names no
 * audience, the token must be meant for `mustName`: Arbor itself (the API base address),
 * or a person's provider's client — which `always` then requires whatever the claim match says.
 */
function claimsAccepted(
  identity: Identity,
  payload: JWTPayload,
  mustName: string,
  always = false,
): boolean {
  const auds = Array.isArray(payload.aud)
    ? payload.aud
    : payload.aud === undefined
      ? []
      : [payload.aud];
  if (always && !auds.includes(mustName)) return false;
  if (identity.staticKeys) {
    return payload.sub === identity.staticKeys.subject && auds.includes(mustName);
  }
  const cm = identity.claimMatch!;
  if (cm.audience === undefined && !auds.includes(mustName)) return false;
  return claimMatchAccepts(cm, payload as Record<string, unknown>);
}
