import type { Capability } from '../../auth/capabilities.js';
import type { Visibility } from '../../core/visibility.js';
import type { BoundWithin } from '../role-bindings/role-binding-store.js';
import type { RoleRef } from '../roles/role.js';
import type { Tx } from '../tx.js';
import type { BindingGrant } from './access-store.js';

/** A role as a simulation reads it: how others see it, and what it grants. */
export interface RoleFacts {
  ref: RoleRef;
  capabilities: readonly Capability[];
}

/** A group as a simulation reads it: what its delete (a cascade) decides on. */
export interface GroupFacts {
  /** The Kubernetes object managing it, null when none. */
  managedBy: string | null;
  /** The manager of some group below it, null when none is managed. */
  managedBelow: string | null;
  /** Whether custom roles are defined at it or below. */
  rolesBelow: boolean;
}

/** A binding as a simulation reads it: with the Kubernetes object managing it. */
export interface SimulatedBindingFacts extends BindingGrant {
  managedBy: string | null;
}

/**
 * What to read: only what the caller may see of what the change set names (the simulator
 * decides that first), each list once (de-duplicated by the simulator).
 */
export interface SimulationAsk {
  /** Groups named (bound at or deleted). */
  groups: readonly string[];
  /** Identities named (bound or deleted). */
  identities: readonly string[];
  /** Roles named (bound or edited). */
  roles: readonly string[];
  /** Bindings deleted. */
  bindings: readonly string[];
  /** Custom roles edited: their holders are touched. */
  editedRoles: readonly string[];
  /** Groups deleted: the identities below them, and those bound at or below them, are touched. */
  deletedGroups: readonly string[];
  /**
   * Identities a binding names that the caller may not list: touched only where one is
   * bound `within` (at a group where the caller binds, by a binding it may list), which is
   * what makes it referable (`referableWithin`); any other is read as if missing.
   */
  referred?: { identities: readonly string[]; within: BoundWithin };
  /**
   * Where the caller may read delegation policies (as `identities:getDelegationPolicy`: it
   * may list and update the identity): the policies of the identities touched are read
   * only there; any other reads as none.
   */
  policies: { listed: Visibility; updated: Visibility };
}

/** A delegation policy as a simulation reads it: what it allows. */
export interface PolicyFacts {
  actors: readonly string[];
  capabilities: readonly Capability[];
  maxLifetimeSeconds: number;
}

/** How much one simulation may read; past either, RESOURCE_EXHAUSTED. */
export interface SimulationLimits {
  identities: number;
  bindings: number;
}

/** Everything a simulation knows of the snapshot. */
export interface SimulationFacts {
  /** The snapshot's instant (epoch ms): the database's `now()` inside it. */
  now: number;
  groups: Map<string, GroupFacts>;
  /** Every identity touched (named ones that exist too), by uid, with its manager. */
  identities: Map<string, string | null>;
  roles: Map<string, RoleFacts>;
  /** Every binding (expired and scheduled ones too) of every identity touched. */
  bindings: SimulatedBindingFacts[];
  /** The delegation policies of the identities touched, where the caller may read them. */
  policies: Map<string, PolicyFacts>;
}

/**
 * What `access:simulate` reads, all inside one snapshot (`UnitOfWork.snapshot`), in a fixed
 * number of statements whatever the change set names: the cost of a simulation follows
 * what it names that the caller may see, never what it names that the caller may not.
 * Bindings come with their expiry and start, and are read expired or not: the simulation
 * decides liveness at the snapshot's instant with the authorizer's own rule.
 */
export interface SimulationStore {
  /**
   * The facts for `ask`, in four statements (named groups and roles with `now()`; the
   * identities touched; their bindings; their readable delegation policies), each
   * whatever `ask` holds.
   * @throws RpcError RESOURCE_EXHAUSTED past `limits` (naming the bound).
   */
  read(tx: Tx, ask: SimulationAsk, limits: SimulationLimits): Promise<SimulationFacts>;
  /** The names of these groups and identities (uids of neither are left out). */
  names(tx: Tx, uids: readonly string[]): Promise<Map<string, string>>;
}
