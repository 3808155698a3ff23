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
