import type { Capability } from '../../auth/capabilities.js';
import type { RoleRef } from '../roles/role.js';
import type { Tx } from '../tx.js';
import type { BindingGrant } from './access-store.js';

/** A role as a simulation reads it: how others see it, and what it grants. */
export interface RoleFacts {
  ref: RoleRef;
  capabilities: readonly Capability[];
}

/**
 * What `access:simulate` reads, all inside one snapshot (`UnitOfWork.snapshot`). Bindings
 * come with their expiry and are read expired or not: the simulation decides liveness at
 * the snapshot's instant (`now`) with the authorizer's own rule.
 */
export interface SimulationStore {
  /** The snapshot's instant (epoch ms): the database's `now()` inside it. */
  now(tx: Tx): Promise<number>;
  existingGroups(tx: Tx, uids: readonly string[]): Promise<Set<string>>;
  existingIdentities(tx: Tx, uids: readonly string[]): Promise<Set<string>>;
  roles(tx: Tx, uids: readonly string[]): Promise<Map<string, RoleFacts>>;
  /** Bindings by uid, expired ones too. */
  bindings(tx: Tx, uids: readonly string[]): Promise<BindingGrant[]>;
  /** The identities bound to any of `roleUids` (expired bindings too). */
  identitiesBoundTo(tx: Tx, roleUids: readonly string[]): Promise<string[]>;
  /**
   * The identities a cascading delete of `groupUid` touches: those hanging below it, and
   * those bound at it or below.
   */
  identitiesUnder(tx: Tx, groupUid: string): Promise<string[]>;
  /** The names of these groups and identities (uids of neither are left out). */
  names(tx: Tx, uids: readonly string[]): Promise<Map<string, string>>;
  /** Every binding (expired ones too) of these identities, by uid. */
  bindingsOfIdentities(tx: Tx, identityUids: readonly string[]): Promise<BindingGrant[]>;
}
