import { CachedGrantSource } from './auth/cached-grant-source.js';
import {
  BrieflyKeptRevocations,
  type RevocationLookup,
  type RevokedTokens,
} from './auth/revoked-tokens.js';
import type { GrantSource } from './auth/authorizer.js';
import type { Database } from './db/connect.js';
import { FeedGrantSource } from './db/feed-grant-source.js';
import { FeedRevokedTokens } from './db/feed-revoked-tokens.js';
import { GenerationCache } from './db/generation-cache.js';
import { FeedCache, type ReadCacheStats } from './db/read-cache.js';
import type { KnexGrantSource } from './db/stores/grant-source.js';
import { validUntilOf, type HoldersRead } from './resources/access/access-service.js';
import type { BindingGrant } from './resources/access/access-store.js';
import type { Group } from './resources/groups/group.js';
import type { Identity } from './resources/identities/identity.js';
import type { ConditionGroup } from './resources/names/condition-groups.js';
import type { ReadCache } from './resources/read-cache.js';

/**
 * The grant source every decision reads, and the read caches: with a change feed,
 * caches it keeps current (db/read-cache.ts), over the one-second grant cache it falls back
 * to; without one, that one-second cache alone.
 */
export function readCachesOf(
  db: Database,
  grantSource: KnexGrantSource,
  writeGeneration: () => number,
): {
  grants: GrantSource;
  groupCache: FeedCache<Group | undefined> | undefined;
  identityCache: FeedCache<Identity | undefined> | undefined;
  bindingCache: FeedCache<BindingGrant[]> | undefined;
  holdersCache: FeedCache<HoldersRead> | undefined;
  conditionGroups: ReadCache<ConditionGroup> | undefined;
  readCaches: Record<string, ReadCacheStats>;
} {
  const ttlGrants = new CachedGrantSource(grantSource);
  if (!db.changeFeed) {
    // Embedded PGlite is written by this process alone: a conditional decision's group
    // path is kept until its next transaction. PostgreSQL without a feed (a transaction
    // pooler) is written by others too: read per decision.
    const conditionGroups =
      db.kind === 'pglite' ? new GenerationCache<ConditionGroup>(writeGeneration) : undefined;
    return {
      grants: ttlGrants,
      groupCache: undefined,
      identityCache: undefined,
      bindingCache: undefined,
      holdersCache: undefined,
      conditionGroups,
      readCaches: conditionGroups ? { condition_groups: conditionGroups.stats } : {},
    };
  }
  const grants = new FeedGrantSource(db.changeFeed, grantSource, ttlGrants);
  const groupCache = new FeedCache<Group | undefined>(db.changeFeed, 'g');
  // The identity an STS exchange names (migration 0034 announces identity changes).
  const identityCache = new FeedCache<Identity | undefined>(db.changeFeed, 'i', {
    maxEntries: 10_000,
  });
  const bindingCache = new FeedCache<BindingGrant[]>(db.changeFeed, 'b');
  // A who-can page derives from every binding above its group: any binding change forgets
  // them all. A page holds up to 200 holders and their bindings, so fewer are kept.
  const holdersCache = new FeedCache<HoldersRead>(db.changeFeed, 'b', {
    maxEntries: 256,
    derived: true,
    validUntil: validUntilOf,
  });
  // A conditional decision's group path, by resource uid: a path derives from every group
  // above the resource, so any group change forgets them all.
  const conditionGroups = new FeedCache<ConditionGroup>(db.changeFeed, 'g', {
    maxEntries: 10_000,
    derived: true,
  });
  return {
    grants,
    groupCache,
    identityCache,
    bindingCache,
    holdersCache,
    conditionGroups,
    readCaches: {
      groups: groupCache.stats,
      identities: identityCache.stats,
      grants: grants.cache.stats,
      bindings: bindingCache.stats,
      holders: holdersCache.stats,
      condition_groups: conditionGroups.stats,
    },
  };
}

/**
 * Whether an API token is revoked, as every authentication asks it: with a change feed,
 * answers kept until a revocation of that jti is announced; without one (PGlite, a
 * transaction pooler), answers kept one second.
 */
export function revokedTokensOf(
  db: Database,
  lookup: RevocationLookup,
): { revoked: RevokedTokens; stats?: ReadCacheStats } {
  const briefly = new BrieflyKeptRevocations(lookup);
  if (!db.changeFeed) return { revoked: briefly };
  const feed = new FeedRevokedTokens(db.changeFeed, lookup, briefly);
  return { revoked: feed, stats: feed.cache.stats };
}
