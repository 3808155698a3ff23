import type { ManagedTable, ManagerStore } from '../../resources/managed/managed-guard.js';
import type { Tx } from '../../resources/tx.js';
import { kx } from '../unit-of-work.js';

/** `managed_by` of groups, identities and role bindings (migration 0008). */
export class KnexManagerStore implements ManagerStore {
  async managerOf(tx: Tx, table: ManagedTable, uid: string): Promise<string | null | undefined> {
    const row = (await kx(tx)(table).where({ uid }).first('managed_by')) as
      { managed_by: string | null } | undefined;
    return row === undefined ? undefined : row.managed_by;
  }

  async setManager(tx: Tx, table: ManagedTable, uid: string, manager: string | null) {
    // updated_at stays: who manages a resource is not a change of the resource.
    await kx(tx)(table).where({ uid }).update({ managed_by: manager });
  }
}
