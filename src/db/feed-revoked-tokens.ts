import type { RevocationLookup, RevokedTokens } from '../auth/revoked-tokens.js';
import type { ChangeFeed } from './change-feed.js';
import { FeedCache } from './read-cache.js';

/**
 * Revocation answers per jti, kept until the change feed announces a revocation of that
 * jti (`r:<jti>`, migration 0028): a token revoked through any worker is refused by every
 * worker as soon as the feed hears the commit. While the feed cannot vouch, answers come
 * from `fallback`, which keeps them one second. Bounded like every FeedCache (least
 * recently used go first).
 */
export class FeedRevokedTokens implements RevokedTokens {
  readonly cache: FeedCache<boolean>;

  constructor(
    feed: ChangeFeed,
    private readonly primary: RevocationLookup,
    private readonly fallback: RevokedTokens,
  ) {
    this.cache = new FeedCache<boolean>(feed, 'r', { maxEntries: 10_000 });
  }

  isRevoked(jti: string): Promise<boolean> {
    return this.cache.read(jti, (fresh) =>
      fresh ? this.primary.isRevoked(jti) : this.fallback.isRevoked(jti),
    );
  }

  known(jti: string): boolean | undefined {
    return this.cache.peek(jti)?.value;
  }

  forget(jti: string): void {
    this.cache.clear();
    this.fallback.forget?.(jti);
  }
}
