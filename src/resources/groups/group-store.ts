import type { Tx } from '../tx.js';
import type { PageQuery, StorePage } from '../list-types.js';
import type { Group } from './group.js';

export interface NewGroup {
  uid: string;
  parentUid: string | null;
  name: string;
  description: string;
}

export interface GroupStore {
  get(tx: Tx, uid: string): Promise<Group | undefined>;
  /** @throws RpcError NOT_FOUND when the parent vanished meanwhile. */
  insert(tx: Tx, group: NewGroup): Promise<Group>;
  update(
    tx: Tx,
    uid: string,
    patch: { name?: string; description?: string },
  ): Promise<Group | undefined>;
  /** The kinds of resource that still hang directly under the group (empty when none). */
  childKinds(tx: Tx, uid: string): Promise<string[]>;
  /** @returns false when nothing was there. @throws RpcError FAILED_PRECONDITION when children remain. */
  delete(tx: Tx, uid: string): Promise<boolean>;
  list(tx: Tx, q: PageQuery): Promise<StorePage<Group>>;
}

/**
 * Which maintained count answers a list's total exactly, if any: a list of everything
 * directly (`children`) or anywhere (`descendants`) below one anchor, with no other filter,
 * for a caller who sees the whole subtree (visibility `all` after the pager drops the
 * filter that the anchor implies). Groups never move, so these counts are kept exact in
 * the transaction of every create and delete and read in O(1) (docs/adr/0003).
 */
export function maintainedCount(
  q: Pick<PageQuery, 'uidp' | 'filters' | 'visibility'>,
): 'children' | 'descendants' | undefined {
  if (q.visibility.kind !== 'all' || Object.keys(q.filters).length > 0) return undefined;
  const { childrenOf, descendantsOf } = q.uidp;
  if (childrenOf !== undefined && descendantsOf === undefined) return 'children';
  if (descendantsOf !== undefined && childrenOf === undefined) return 'descendants';
  return undefined;
}
