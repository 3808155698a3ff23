import { createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { unavailable } from '../core/rpc-error.js';

type KeyResolver = ReturnType<typeof createLocalJWKSet>;

/** Keys Arbor already trusts for an issuer without asking it (e.g. a cluster's SA keys). */
export interface TrustedIssuerKeys {
  keysFor(issuer: string): Promise<JSONWebKeySet | undefined>;
}

export interface RemoteKeySetOptions {
  allowInsecure: boolean;
  fetch?: typeof fetch;
  now?: () => number;
  /** How long fetched keys are used before a refresh is tried. */
  maxAgeMs?: number;
  /** An unknown `kid` triggers at most one refetch per issuer in this window. */
  refetchIntervalMs?: number;
  /** If the issuer is down, keys this old still verify; older ones are dropped. */
  staleLimitMs?: number;
  timeoutMs?: number;
  maxBytes?: number;
  trusted?: TrustedIssuerKeys;
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
  readonly #entries = new Map<string, Entry>();
  readonly #inflight = new Map<string, Promise<Entry>>();
  readonly #o: Required<Omit<RemoteKeySetOptions, 'trusted'>> & { trusted?: TrustedIssuerKeys };

  constructor(o: RemoteKeySetOptions) {
    this.#o = {
      fetch: globalThis.fetch.bind(globalThis),
      now: Date.now,
      maxAgeMs: 60 * 60 * 1000,
      refetchIntervalMs: 30_000,
      staleLimitMs: 24 * 60 * 60 * 1000,
      timeoutMs: 5_000,
      maxBytes: 256 * 1024,
      ...o,
    };
  }

  /** Number of network fetches made so far (discovery + JWKS), for tests and metrics. */
  fetches = 0;

  /**
   * A key resolver for `issuer`, fresh unless `refresh` (an unknown kid) asks for a refetch
   * and the last attempt is older than the refetch interval.
   *
   * @throws RpcError UNAVAILABLE when no usable keys can be had.
   */
  async resolver(issuer: string, refresh = false): Promise<KeyResolver> {
    const trusted = await this.#o.trusted?.keysFor(issuer);
    if (trusted) return createLocalJWKSet(trusted);
    const now = this.#o.now();
    const entry = this.#entries.get(issuer);
    const due = !entry || now - entry.fetchedAt > this.#o.maxAgeMs || refresh;
    if (entry && (!due || now - entry.lastAttempt < this.#o.refetchIntervalMs))
      return entry.resolver;
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
    const discovery = await this.getJson(
      `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`,
    );
    if (discovery.issuer !== issuer || typeof discovery.jwks_uri !== 'string') {
      throw unavailable('the issuer published an unusable discovery document');
    }
    this.checkUrl(discovery.jwks_uri);
    const jwks = (await this.getJson(discovery.jwks_uri)) as unknown as JSONWebKeySet;
    if (!Array.isArray(jwks.keys)) throw unavailable('the issuer published an unusable key set');
    const now = this.#o.now();
    const entry = { jwks, resolver: createLocalJWKSet(jwks), fetchedAt: now, lastAttempt: now };
    this.#entries.set(issuer, entry);
    return entry;
  }

  private checkUrl(url: string): void {
    const u = new URL(url);
    if (u.protocol !== 'https:' && !(this.#o.allowInsecure && u.protocol === 'http:')) {
      throw unavailable('the issuer must be served over https');
    }
  }

  private async getJson(url: string): Promise<Record<string, unknown>> {
    this.checkUrl(url);
    this.fetches++;
    let text: string;
    try {
      const res = await this.#o.fetch(url, {
        redirect: 'error',
        signal: AbortSignal.timeout(this.#o.timeoutMs),
        headers: { accept: 'application/json' },
      });
      if (!res.ok) throw new Error(`status ${res.status}`);
      text = await res.text();
    } catch {
      throw unavailable('the token issuer could not be reached');
    }
    if (text.length > this.#o.maxBytes)
      throw unavailable('the issuer answered with too large a document');
    try {
      const v = JSON.parse(text) as unknown;
      if (typeof v !== 'object' || v === null) throw new Error('not an object');
      return v as Record<string, unknown>;
    } catch {
      throw unavailable('the issuer answered with invalid JSON');
    }
  }
}
