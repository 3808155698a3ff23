import type { Grant, GrantSource } from './authorizer.js';

/**
 * Grants per identity, remembered for a moment. Every authorized request needs them, and
 * they change rarely: writes that change them in this process call `invalidate()`, so a
 * replica sees its own changes at once and another replica's within `ttlMs`.
 */
export class CachedGrantSource implements GrantSource {
  readonly #cache = new Map<string, { at: number; grants: Promise<Grant[]> }>();

  constructor(
    private readonly inner: GrantSource,
    private readonly ttlMs = 1_000,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  grantsOf(identityUid: string): Promise<Grant[]> {
    const t = this.now();
    const hit = this.#cache.get(identityUid);
    if (hit && t - hit.at < this.ttlMs) return hit.grants;
    if (this.#cache.size >= this.maxEntries) this.#cache.clear();
    const grants = this.inner.grantsOf(identityUid);
    this.#cache.set(identityUid, { at: t, grants });
    // A failed lookup is not remembered.
    grants.catch(() => this.#cache.delete(identityUid));
    return grants;
  }

  invalidate(): void {
    this.#cache.clear();
  }
}
