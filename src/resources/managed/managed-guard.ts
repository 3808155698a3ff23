import { managerOf, type Principal } from '../../auth/principal.js';
import { failedPrecondition } from '../../core/rpc-error.js';
import type { Tx } from '../tx.js';

/** The tables whose rows a custom resource can manage. */
export type ManagedTable = 'groups' | 'identities' | 'role_bindings';

/** Where the manager of a row is kept (`managed_by`). */
export interface ManagerStore {
  /** The manager, null when unmanaged, undefined when the row does not exist. */
  managerOf(tx: Tx, table: ManagedTable, uid: string): Promise<string | null | undefined>;
  setManager(tx: Tx, table: ManagedTable, uid: string, manager: string | null): Promise<void>;
}

/**
 * Drift is refused, not reverted later: a group, identity or role binding that a custom
 * resource manages may be changed or deleted only on behalf of that custom resource
 * (a principal whose `manager` names it). Everyone else — REST callers, the admin token,
 * another custom resource — gets FAILED_PRECONDITION naming the managing object, in the
 * same transaction as the write, so there is no window. Used by the services; the access
 * decision itself stays with the Authorizer.
 */
export class ManagedGuard {
  constructor(private readonly store: ManagerStore) {}

  /**
   * Before an update or delete, inside its transaction. A manager's first write to an
   * unmanaged row (an adoption) claims it.
   * @throws RpcError FAILED_PRECONDITION (MANAGED_BY_KUBERNETES) when another manages it.
   */
  async beforeWrite(tx: Tx, table: ManagedTable, uid: string, p: Principal): Promise<void> {
    const current = await this.store.managerOf(tx, table, uid);
    if (current === undefined) return; // the write itself reports NOT_FOUND
    requireUnmanaged(current, p);
    const mine = managerOf(p);
    if (mine !== undefined && current !== mine) await this.store.setManager(tx, table, uid, mine);
  }

  /** The manager of a row (null: unmanaged; undefined: no such row), for a dry run's facts. */
  managerOf(tx: Tx, table: ManagedTable, uid: string): Promise<string | null | undefined> {
    return this.store.managerOf(tx, table, uid);
  }

  /** After an insert, inside its transaction: the creating custom resource manages it. */
  async created<T extends { uid: string }>(
    tx: Tx,
    table: ManagedTable,
    row: T,
    p: Principal,
  ): Promise<T> {
    const mine = managerOf(p);
    if (mine !== undefined) await this.store.setManager(tx, table, row.uid, mine);
    return row;
  }

  /**
   * Stop managing (the custom resource is deleted with `deletionPolicy: Orphan`).
   * @throws RpcError FAILED_PRECONDITION when another manages it.
   */
  async release(tx: Tx, table: ManagedTable, uid: string, p: Principal): Promise<void> {
    const current = await this.store.managerOf(tx, table, uid);
    if (current === undefined || current === null) return;
    if (current !== managerOf(p)) throw managedBy(current);
    await this.store.setManager(tx, table, uid, null);
  }
}

/**
 * The guard's rule alone, on a manager already read (`managed_by`; null or undefined: none):
 * what `beforeWrite` decides, and what a dry run of a write (access:simulate) decides on
 * the same marker.
 * @throws RpcError FAILED_PRECONDITION (MANAGED_BY_KUBERNETES) when another manages it.
 */
export function requireUnmanaged(current: string | null | undefined, p: Principal): void {
  if (current !== null && current !== undefined && current !== managerOf(p))
    throw managedBy(current);
}

function managedBy(manager: string): Error {
  return failedPrecondition(
    'MANAGED_BY_KUBERNETES',
    `managed by the Kubernetes object ${manager}; change that object instead, or delete it ` +
      'with deletionPolicy: Orphan to manage this resource here',
    manager,
  );
}
