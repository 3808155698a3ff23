import { createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { Lru } from '../core/lru.js';
import { unavailable } from '../core/rpc-error.js';
import { OutboundError, OutboundFetcher } from '../outbound/outbound-fetch.js';

type KeyResolver = ReturnType<typeof createLocalJWKSet>;

/** Keys Arbor already trusts for an issuer without asking it (e.g. a cluster's SA keys). */
export interface TrustedIssuerKeys {
  keysFor(issuer: string): Promise<JSONWebKeySet | undefined>;
}

/**
 * The one answer a client gets for every failure to obtain an issuer's keys: an address
 * refused by policy, a connection refused, a timeout, a 404, bad JSON, a discovery document
 * for another issuer. Telling them apart would let a tenant map what Arbor can reach.
 */
export const ISSUER_UNAVAILABLE = "the token issuer's keys could not be obtained";

/** What fetches discovery documents and key sets: `OutboundFetcher`, or a fake in tests. */
export type JsonFetcher = Pick<OutboundFetcher, 'getJson'>;

/** Where the detail of an upstream failure goes instead (a pino logger fits). */
export interface OutboundLog {
  warn(detail: Record<string, unknown>, message: string): void;
}

export interface RemoteKeySetOptions {
  allowInsecure: boolean;
  /** Fetches discovery and key sets; an OutboundFetcher built from `allowInsecure` by default. */
  fetcher?: JsonFetcher;
  log?: OutboundLog;
  now?: () => number;
  /** How long fetched keys are used before a refresh is tried. */
  maxAgeMs?: number;
  /** An unknown `kid` triggers at most one refetch per issuer in this window. */
  refetchIntervalMs?: number;
  /** If the issuer is down, keys this old still verify; older ones are dropped. */
  staleLimitMs?: number;
  /** Issuers whose keys are cached at once; the least recently used is dropped first. */
  maxIssuers?: number;
  /**
   * After a failed fetch, an issuer is not asked again for this long, doubling with each
   * further failure up to `failureBackoffMaxMs`; a success forgets its failures.
   */
  failureBackoffMs?: number;
  failureBackoffMaxMs?: number;
  trusted?: TrustedIssuerKeys;
}

/** An issuer's consecutive failed fetches, and when it may be asked again. */
interface Failures {
  count: number;
  retryAt: number;
}

interface Entry {
  jwks: JSONWebKeySet;
  resolver: KeyResolver;
  fetchedAt: number;
  lastAttempt: number;
}

/**
 * Issuers' signing keys, found through OIDC discovery and cached. Only called for an
 * issuer that an identity names (the caller checks that first), so a token's `iss` can
 * never make Arbor fetch an address of the attacker's choosing.
 */
export class RemoteKeySets {
  readonly #entries: Lru<string, Entry>;
  readonly #inflight = new Map<string, Promise<Entry>>();
  readonly #failures: Lru<string, Failures>;
  readonly #fetcher: JsonFetcher;
  readonly #o: Required<Omit<RemoteKeySetOptions, 'trusted' | 'fetcher' | 'log'>> &
    Pick<RemoteKeySetOptions, 'trusted' | 'log'>;

  constructor(o: RemoteKeySetOptions) {
    this.#o = {
      now: Date.now,
      maxAgeMs: 60 * 60 * 1000,
      refetchIntervalMs: 30_000,
      staleLimitMs: 24 * 60 * 60 * 1000,
      maxIssuers: 1000,
      failureBackoffMs: 1_000,
      failureBackoffMaxMs: 5 * 60_000,
      ...o,
    };
    this.#fetcher = o.fetcher ?? new OutboundFetcher({ allowInsecure: o.allowInsecure });
    this.#entries = new Lru(this.#o.maxIssuers);
    this.#failures = new Lru(this.#o.maxIssuers);
  }

  /** Issuers whose keys are cached now (bounded by `maxIssuers`). */
  get cachedIssuers(): number {
    return this.#entries.size;
  }

  /**
   * A key resolver for `issuer`, fresh unless `refresh` (an unknown kid) asks for a refetch
   * and the last attempt is older than the refetch interval.
   *
   * @throws RpcError UNAVAILABLE, always with the message ISSUER_UNAVAILABLE, when no usable
   *   keys can be had; the reason is logged.
   */
  async resolver(issuer: string, refresh = false): Promise<KeyResolver> {
    const trusted = await this.#o.trusted?.keysFor(issuer);
    if (trusted) return createLocalJWKSet(trusted);
    const now = this.#o.now();
    const entry = this.#entries.get(issuer);
    const due = !entry || now - entry.fetchedAt > this.#o.maxAgeMs || refresh;
    if (entry && (!due || now - entry.lastAttempt < this.#o.refetchIntervalMs))
      return entry.resolver;
    // An issuer that failed lately is not asked again yet: a token naming a dead or slow
    // issuer cannot make every exchange wait for it (or make Arbor hammer it).
    const failed = this.#failures.get(issuer);
    if (failed && now < failed.retryAt) {
      if (entry && now - entry.fetchedAt < this.#o.staleLimitMs) return entry.resolver;
      throw unavailable(ISSUER_UNAVAILABLE);
    }
    try {
      return (await this.load(issuer)).resolver;
    } catch (e) {
      if (entry) entry.lastAttempt = now;
      if (entry && now - entry.fetchedAt < this.#o.staleLimitMs) return entry.resolver;
      if (entry) this.#entries.delete(issuer);
      throw e;
    }
  }

  private load(issuer: string): Promise<Entry> {
    let p = this.#inflight.get(issuer);
    if (!p) {
      p = this.fetchKeys(issuer).finally(() => this.#inflight.delete(issuer));
      this.#inflight.set(issuer, p);
    }
    return p;
  }

  private async fetchKeys(issuer: string): Promise<Entry> {
    try {
      const discovery = await this.#fetcher.getJson(
        `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`,
      );
      if (discovery.issuer !== issuer || typeof discovery.jwks_uri !== 'string') {
        throw new OutboundError(
          'json',
          `${issuer} published a discovery document for another issuer or without jwks_uri`,
        );
      }
      const jwks = (await this.#fetcher.getJson(discovery.jwks_uri)) as unknown as JSONWebKeySet;
      if (!Array.isArray(jwks.keys)) {
        throw new OutboundError('json', `${discovery.jwks_uri} is not a key set`);
      }
      const now = this.#o.now();
      const entry = { jwks, resolver: createLocalJWKSet(jwks), fetchedAt: now, lastAttempt: now };
      this.#entries.set(issuer, entry);
      this.#failures.delete(issuer);
      return entry;
    } catch (e) {
      const count = (this.#failures.get(issuer)?.count ?? 0) + 1;
      const wait = Math.min(
        this.#o.failureBackoffMaxMs,
        this.#o.failureBackoffMs * 2 ** Math.min(count - 1, 30),
      );
      this.#failures.set(issuer, { count, retryAt: this.#o.now() + wait });
      const detail =
        e instanceof OutboundError
          ? { failure: e.failure, detail: e.detail }
          : { detail: String(e) };
      this.#o.log?.warn(
        { component: 'sts', issuer, ...detail, failures: count, retryInMs: wait },
        'issuer keys could not be fetched',
      );
      throw unavailable(ISSUER_UNAVAILABLE);
    }
  }
}
