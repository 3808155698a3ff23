import type { Capability } from '../../auth/capabilities.js';
import type { RoleRef } from '../roles/role.js';
import type { Tx } from '../tx.js';

/** One live (unexpired) role binding with what its role grants: a fact access answers cite. */
export interface BindingGrant {
  uid: string;
  /** The group the binding is bound at; it grants there and everywhere below. */
  groupUid: string;
  identityUid: string;
  role: RoleRef;
  capabilities: readonly Capability[];
}

/** What the access service reads; live bindings only (expired ones grant nothing). */
export interface AccessStore {
  identityExists(tx: Tx, uid: string): Promise<boolean>;
  /** Which of `uids` are groups that exist. */
  existingGroups(tx: Tx, uids: readonly string[]): Promise<Set<string>>;
  /** Every live binding of one identity. */
  bindingsOf(tx: Tx, identityUid: string): Promise<BindingGrant[]>;
  /** The live bindings at `groupUid` or any group above it whose role holds `cap`. */
  bindingsGranting(tx: Tx, groupUid: string, cap: Capability): Promise<BindingGrant[]>;
}
