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
}
