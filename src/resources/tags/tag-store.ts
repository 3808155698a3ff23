import type { PageQuery, StorePage } from '../list-types.js';
import type { Tx } from '../tx.js';
import type { Tag } from './tag.js';

export interface TagUpsert {
  /** The uid a new tag gets; an existing tag of the same name keeps its own. */
  uid: string;
  parentUid: string;
  name: string;
  digest: string;
  /** Undefined keeps the stored value (false for a new tag). */
  deprecated: boolean | undefined;
  /** Whether an existing tag of that name may be moved; when false it is left untouched. */
  mayMove: boolean;
}

/** A tag the registry reports pushed (§5.5); `at` is the event's own time. */
export interface TagPush {
  uid: string;
  parentUid: string;
  name: string;
  digest: string;
  /** RFC 3339 time of the registry event, kept to the microsecond. */
  at: string;
}

/** What a registry delete event removes from one repo: a tag, a digest's tags, or all. */
export interface TagRemoval {
  parentUid: string;
  name?: string;
  digest?: string;
  at: string;
}

export interface TagStore {
  get(tx: Tx, uid: string): Promise<Tag | undefined>;
  /**
   * Insert the tag, or move the existing tag of that name in that repo (same uid, new
   * digest, new update time) when `mayMove`.
   * @returns undefined when the tag exists and `mayMove` is false (nothing written).
   * @throws RpcError NOT_FOUND when the repo does not exist.
   */
  upsert(tx: Tx, tag: TagUpsert): Promise<{ tag: Tag; created: boolean } | undefined>;
  /** @returns false when nothing was there. */
  delete(tx: Tx, uid: string): Promise<boolean>;
  list(tx: Tx, q: PageQuery): Promise<StorePage<Tag>>;
  /**
   * Apply a registry push unless a push at the same or a later time was applied already
   * (a redelivered or overtaken event). @returns the tag when it changed, else undefined.
   * @throws RpcError NOT_FOUND when the repo does not exist.
   */
  recordPush(tx: Tx, push: TagPush): Promise<Tag | undefined>;
  /** Remove matching tags not pushed after the event. @returns how many were removed. */
  recordRemoval(tx: Tx, removal: TagRemoval): Promise<number>;
}
