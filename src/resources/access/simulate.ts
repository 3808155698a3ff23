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
 * The delta's pages: keyed by identity, group and effect, bound (in page tokens) to
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
  /** Which of the delta's capabilities this binding grants at its group (the proof of each). */
  capabilities: Capability[];
}

export type DeltaEffect = 'GAIN' | 'LOSE';

/**
 * An identity or a group as the caller may see it: `name` and `path` (the names from the
 * top of what the caller may list down to it, joined by `/`) are empty where it may not.
 */
export interface PathRef {
  uid: string;
  name: string;
  path: string;
}

/** Capabilities that do not change beneath one group strictly below the delta's group. */
export interface UnchangedBelow {
  groupUid: string;
  capabilities: Capability[];
}

/**
 * One identity gaining (or losing) some capabilities at one group and below it, except
 * beneath `unchangedBelow` (where it held, or keeps, those by another grant). One entry per
 * identity, group and effect: the capabilities are listed, the proofs given once.
 */
export interface AccessDelta {
  identity: PathRef;
  /** The top of the subtree where the access changes. */
  group: PathRef;
  effect: DeltaEffect;
  capabilities: Capability[];
  /** The grants at `group` before the change set (empty for a GAIN, or without `explain`). */
  before: SimulatedGrant[];
  /** The grants at `group` after it (empty for a LOSE, or without `explain`). */
  after: SimulatedGrant[];
  /**
   * Groups strictly below `group` where some of the capabilities do not change (held
   * before and after, by a grant bound there), tops only, with those capabilities.
   */
  unchangedBelow: UnchangedBelow[];
}

/** The answer: every change's verdict, and one page of the delta. */
export interface SimulateAnswer {
  changes: ChangeVerdict[];
  deltas: AccessDelta[];
  nextPageToken?: string;
  totalCount: string;
}
