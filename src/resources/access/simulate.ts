import type { Capability } from '../../auth/capabilities.js';
import type { Condition } from '../../auth/condition.js';
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
        /** A conditional binding (checked as create checks it): its deltas are conditional. */
        condition?: Condition;
      };
    }
  | { deleteRoleBinding: { uid: string } }
  | { updateRole: { uid: string; capabilities: Capability[] } }
  | { deleteIdentity: { uid: string } }
  | { deleteGroup: { uid: string } }
  | {
      /** As `identities:setDelegationPolicy` takes it; `actors: []` removes the policy. */
      setDelegationPolicy: {
        identityUid: string;
        actors: string[];
        capabilities?: Capability[];
        maxLifetimeSeconds?: number;
      };
    };

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
  /** A conditional binding's condition. */
  condition?: Condition;
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
  /**
   * A conditional delta: the capabilities are gained (or lost) only when this condition
   * holds, by conditional bindings; absent: unconditionally. Conditional bindings never
   * count towards an unconditional delta.
   */
  condition?: Condition;
}

/** What a delegation policy allows one actor, before or after. */
export interface DelegationAllowed {
  /** The capabilities a delegated token may hold at most (the subject's grants cap them too). */
  capabilities: Capability[];
  maxLifetimeSeconds: number;
}

export type DelegationEffect = 'GAIN' | 'LOSE' | 'CHANGE';

/**
 * One actor gaining (or losing) the ability to act for one identity (its delegation policy
 * naming it), or keeping it with another cap (CHANGE). Shown only for identities whose
 * policy the caller may read (it may list and update them).
 */
export interface DelegationDelta {
  /** The identity acted for (whose policy changes). */
  subject: PathRef;
  /** The identity that may (or may no longer) act for it. */
  actor: PathRef;
  effect: DelegationEffect;
  /** Absent for a GAIN. */
  before?: DelegationAllowed;
  /** Absent for a LOSE. */
  after?: DelegationAllowed;
}

/** The answer: every change's verdict, and one page of the delta. */
export interface SimulateAnswer {
  changes: ChangeVerdict[];
  deltas: AccessDelta[];
  /** The page's delegation entries (paged with `deltas`, after every access entry). */
  delegationDeltas: DelegationDelta[];
  nextPageToken?: string;
  totalCount: string;
}
