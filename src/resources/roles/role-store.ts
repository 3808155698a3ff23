import type { Capability } from '../../auth/capabilities.js';
import type { PageQuery, StorePage } from '../list-types.js';
import type { Tx } from '../tx.js';
import type { Role } from './role.js';

export interface NewRole {
  uid: string;
  parentUid: string;
  name: string;
  description: string;
  capabilities: readonly Capability[];
}

export interface RoleStore {
  get(tx: Tx, uid: string): Promise<Role | undefined>;
  /** @throws RpcError NOT_FOUND when the parent group vanished meanwhile. */
  insert(tx: Tx, role: NewRole): Promise<Role>;
  /** Custom roles only: a built-in is never matched. */
  update(
    tx: Tx,
    uid: string,
    patch: { name?: string; description?: string; capabilities?: readonly Capability[] },
  ): Promise<Role | undefined>;
  /**
   * Custom roles only. @returns false when nothing was there.
   * @throws RpcError FAILED_PRECONDITION (RESOURCE_IN_USE) while a binding names the role.
   */
  delete(tx: Tx, uid: string): Promise<boolean>;
  /** Built-ins are part of every caller's list, whatever its visibility. */
  list(tx: Tx, q: PageQuery): Promise<StorePage<Role>>;
}
