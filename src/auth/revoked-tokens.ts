/** Whether an API token's `jti` is revoked: asked on every authentication. */
export interface RevokedTokens {
  /** @throws whatever the lookup throws (the request then fails; it is never let through). */
  isRevoked(jti: string): Promise<boolean>;
  /** This process revoked `jti`: forget any answer kept for it. */
  forget?(jti: string): void;
  /**
   * The answer `isRevoked` would give, where it is already known and may be served, at no
   * wait; else undefined (then ask `isRevoked`). Asked on every request first: a request
   * that awaits nothing for its revocation check costs less.
   */
  known?(jti: string): boolean | undefined;
}

/** Where revocations are looked up, one jti at a time. */
export interface RevocationLookup {
  isRevoked(jti: string): Promise<boolean>;
}

/**
 * Answers kept for a moment (`ttlMs`, default 1 s): what every process does without the
 * change feed, and what the feed's cache falls back to while it cannot vouch. A revocation
 * in this process is seen at once (`forget`); one in another process within `ttlMs`.
 * Bounded: at most `maxEntries` answers, all forgotten when full.
 */
export class BrieflyKeptRevocations implements RevokedTokens {
  readonly #kept = new Map<string, { at: number; revoked: Promise<boolean> }>();

  constructor(
    private readonly inner: RevocationLookup,
    private readonly ttlMs = 1_000,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  isRevoked(jti: string): Promise<boolean> {
    const t = this.now();
    const hit = this.#kept.get(jti);
    if (hit && t - hit.at < this.ttlMs) return hit.revoked;
    if (this.#kept.size >= this.maxEntries) this.#kept.clear();
    const revoked = this.inner.isRevoked(jti);
    this.#kept.set(jti, { at: t, revoked });
    // A failed lookup is not kept: the next request asks again.
    revoked.catch(() => this.#kept.delete(jti));
    return revoked;
  }

  forget(jti: string): void {
    this.#kept.delete(jti);
  }
}
