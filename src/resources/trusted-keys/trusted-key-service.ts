import type { TrustedIssuerKeys } from '../../auth/remote-key-sets.js';
import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import { Lru } from '../../core/lru.js';
import { invalidField, permissionDenied } from '../../core/rpc-error.js';
import type { UnitOfWork } from '../tx.js';
import type { TrustedKeySet, TrustedKeyStore } from './trusted-key-store.js';

/** How long a looked-up key set is reused before the database is asked again. */
const CACHE_MS = 30_000;
/**
 * Issuers remembered at once, misses included: the STS asks for every issuer a token names
 * that an identity accepts, and an issuer pattern accepts many, so the cache must be bounded.
 */
const CACHE_ENTRIES = 1000;

/**
 * Key sets trusted for an issuer without discovery. Written only by Arbor's own
 * components (the reconciler publishing its cluster's service-account keys); read by
 * the STS through `keysFor`, cached briefly so an exchange costs no query.
 */
export class TrustedKeyService implements TrustedIssuerKeys {
  readonly #cache = new Lru<string, { at: number; jwks: TrustedKeySet['jwks'] | undefined }>(
    CACHE_ENTRIES,
  );

  constructor(
    private readonly uow: UnitOfWork,
    private readonly store: TrustedKeyStore,
    private readonly authz: Authorizer,
    private readonly now: () => number = Date.now,
  ) {}

  async keysFor(issuer: string): Promise<TrustedKeySet['jwks'] | undefined> {
    const hit = this.#cache.get(issuer);
    if (hit && this.now() - hit.at < CACHE_MS) return hit.jwks;
    const row = await this.uow.read((tx) => this.store.get(tx, issuer));
    this.#cache.set(issuer, { at: this.now(), jwks: row?.jwks });
    return row?.jwks;
  }

  /**
   * Publish the key set of `issuer`. Returns whether anything changed.
   * @throws RpcError PERMISSION_DENIED unless the caller is Arbor itself or the admin.
   */
  async publish(p: Principal, issuer: string, jwks: unknown, source: string): Promise<boolean> {
    if (!this.authz.isSuperuser(p))
      throw permissionDenied('only Arbor components publish trusted keys');
    const keys = (jwks as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys) || keys.length === 0)
      throw invalidField('jwks', 'must hold at least one key');
    if (keys.some((k) => typeof k !== 'object' || k === null || 'd' in k)) {
      throw invalidField('jwks', 'must hold public keys only');
    }
    const changed = await this.uow.run((tx) =>
      this.store.put(tx, issuer, { keys: keys as Array<Record<string, unknown>> }, source),
    );
    this.#cache.delete(issuer);
    return changed;
  }
}
