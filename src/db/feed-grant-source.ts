import type { Grant, GrantSource } from '../auth/authorizer.js';
import type { ChangeFeed } from './change-feed.js';
import { FeedCache } from './read-cache.js';

/**
 * Grants per identity, kept until the change feed announces a change to the identity's
 * bindings (or to any role). While the feed cannot vouch for the cache, grants come from
 * `fallback`: the one-second cache every process had before the feed existed, so a revoked
 * binding stops granting within that bound either way.
 */
export class FeedGrantSource implements GrantSource {
  readonly cache: FeedCache<Grant[]>;

  constructor(
    feed: ChangeFeed,
    private readonly primary: GrantSource,
    private readonly fallback: GrantSource,
  ) {
    this.cache = new FeedCache<Grant[]>(feed, 'b');
  }

  grantsOf(identityUid: string): Promise<Grant[]> {
    return this.cache.read(identityUid, (fresh) =>
      fresh ? this.primary.grantsOf(identityUid) : this.fallback.grantsOf(identityUid),
    );
  }

  invalidate(): void {
    this.cache.clear();
    this.fallback.invalidate?.();
  }
}
