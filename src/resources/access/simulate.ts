import type { Capability } from '../../auth/capabilities.js';
import type { ListSpec } from '../../core/list-request.js';
import type { RoleRef } from '../roles/role.js';

/** One change of a change set, as `access:simulate` takes it (after validation). */
export type AccessChange =
  | {
      createRoleBinding: {
        groupUid: string;
        identityUid: string;
        roleUid: string;
        /** From this instant the binding would grant nothing; absent: never. */
        expireTime?: Date;
        /** From this instant the binding would grant (a scheduled grant); absent: at once. */
        notBefore?: Date;
      };
    }
  | { deleteRoleBinding: { uid: string } }
  | { updateRole: { uid: string; capabilities: Capability[] } }
  | { deleteIdentity: { uid: string } }
  | { deleteGroup: { uid: string } };

/**
 * The bounds of one simulation's work. Changes are input (more is INVALID_ARGUMENT); the
 * identities a set touches (named, bound to a role it edits, below or bound below a group
 * it deletes) and their bindings are read facts, and no statement of the snapshot may take
 * longer than its timeout: past either, RESOURCE_EXHAUSTED (429) naming the bound.
 */
export const MAX_SIMULATED_CHANGES = 1_000;
export const MAX_SIMULATED_IDENTITIES = 5_000;
export const MAX_SIMULATED_BINDINGS = 10_000;
export const SIMULATION_STATEMENT_TIMEOUT_MS = 5_000;

/**
 * The delta's pages: keyed by identity, capability and group, bound (in page tokens) to
 * the change set by `changes`, a fingerprint of it.
 */
export const SIMULATE_LIST: ListSpec = {
  kind: 'access.simulate',
  orderBy: ['uid'],
  defaultOrder: { field: 'uid', direction: 'asc' },
  filters: { changes: 'string' },
};

/** What became of one change of the set. */
export interface ChangeVerdict {
  /** Its position in the request's `changes`. */
  index: number;
  /**
   * Whether the delta counts it: false only when it names something that does not exist
   * (at that point of the set) or that the caller cannot see, which read alike.
   */
  applied: boolean;
  /** Whether the caller could make this change itself now (its capabilities, no escalation). */
  permitted: boolean;
  /** Why it is not applied or not permitted; absent when it is both. */
  reason?: string;
}

/** A grant before or after: an existing binding (`bindingUid`) or one the set creates. */
export interface SimulatedGrant {
  /** Absent for a binding the change set creates (see `changeIndex`). */
  bindingUid?: string;
  /** The change creating the binding; absent for an existing one. */
  changeIndex?: number;
  role: RoleRef;
  /** The group the binding is bound at. */
  groupUid: string;
  /** From `groupUid` down to the delta's group, both included. */
  path: string[];
  /** When the binding stops granting; absent: never. */
  expireTime?: Date;
  /** When the binding starts granting (a scheduled grant that has started); absent: at creation. */
  notBefore?: Date;
}

export type DeltaEffect = 'GAIN' | 'LOSE';

/**
 * One identity gaining or losing one capability at one group and below it, except beneath
 * the groups in `unchangedBelow` (where it held, or keeps, the capability by another grant).
 */
export interface AccessDelta {
  identity: { uid: string; name: string };
  capability: Capability;
  /** The top of the subtree where the access changes. */
  group: { uid: string; name: string };
  effect: DeltaEffect;
  /** The grants at `group` before the change set (empty for a GAIN). */
  before: SimulatedGrant[];
  /** The grants at `group` after it (empty for a LOSE). */
  after: SimulatedGrant[];
  /**
   * Groups strictly below `group` where the capability does not change (held before and
   * after, by a grant bound there), tops only, by uid.
   */
  unchangedBelow: string[];
}

/** The answer: every change's verdict, and one page of the delta. */
export interface SimulateAnswer {
  changes: ChangeVerdict[];
  deltas: AccessDelta[];
  nextPageToken?: string;
  totalCount: string;
}
