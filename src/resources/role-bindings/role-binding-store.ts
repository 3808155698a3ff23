import type { Capability } from '../../auth/capabilities.js';
import type { Condition } from '../../auth/condition.js';
import type { Visibility } from '../../core/visibility.js';
import type { PageQuery, StorePage } from '../list-types.js';
import type { Tx } from '../tx.js';
import type { RoleBinding } from './role-binding.js';

/** What a binding about to be written refers to, read in one round trip. */
export interface BindingRefs {
  groupExists: boolean;
  identityExists: boolean;
  /** The role's capabilities; undefined when there is no such role. */
  roleCapabilities: Capability[] | undefined;
  /**
   * Whether the identity holds a binding (expired or scheduled too) at a group in
   * `BoundWithin.at` that lies in `BoundWithin.seen`; false when not asked.
   */
  identityBound: boolean;
}

/**
 * Where a caller may know an identity from by its bindings: groups where it may bind
 * (`at`, its `role_bindings.create` view) and bindings it may list (`seen`).
 */
export interface BoundWithin {
  at: Visibility;
  seen: Visibility;
}

export interface NewRoleBinding {
  uid: string;
  parentUid: string;
  identityUid: string;
  roleUid: string;
  expireTime?: Date;
  notBefore?: Date;
  condition?: Condition;
}

export interface RoleBindingStore {
  /**
   * The binding's references in one round trip; `bound`: also whether the identity is
   * bound within it (`BindingRefs.identityBound`), in the same statement.
   */
  refs(
    tx: Tx,
    groupUid: string,
    identityUid: string,
    roleUid: string,
    bound?: BoundWithin,
  ): Promise<BindingRefs>;
  get(tx: Tx, uid: string): Promise<RoleBinding | undefined>;
  /**
   * @throws RpcError ALREADY_EXISTS (same group, identity and role), INVALID_ARGUMENT
   *   (identity or role gone meanwhile), NOT_FOUND (group gone meanwhile).
   */
  insert(tx: Tx, binding: NewRoleBinding): Promise<RoleBinding>;
  /** @throws RpcError like `insert`. `expireTime` absent: unchanged. */
  update(
    tx: Tx,
    uid: string,
    refs: { identityUid: string; roleUid: string; expireTime?: Date },
  ): Promise<RoleBinding | undefined>;
  /**
   * Delete the bindings `uids`: the one statement that deletes binding rows, called only by
   * `revokeBindings`, which records each. @returns the uids that were there and are gone.
   */
  deleteAll(tx: Tx, uids: readonly string[]): Promise<string[]>;
  /** Every binding that names the identity, locked for this transaction. */
  ofIdentity(tx: Tx, identityUid: string): Promise<RoleBinding[]>;
  list(tx: Tx, q: PageQuery): Promise<StorePage<RoleBinding>>;
  /**
   * Up to `limit` bindings that expired before `cutoff`, oldest first, locked for this
   * transaction; rows another replica's sweeper holds are skipped, not waited for.
   */
  expiredBefore(tx: Tx, cutoff: Date, limit: number): Promise<RoleBinding[]>;
}
