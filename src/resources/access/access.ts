import type { Capability } from '../../auth/capabilities.js';
import type { Condition, ConditionValue } from '../../auth/condition.js';
import type { ListSpec } from '../../core/list-request.js';
import type { RoleRef } from '../roles/role.js';

/** A binding that grants what was asked, and how its grant reaches the asked group. */
export interface GrantProof {
  bindingUid: string;
  role: RoleRef;
  /** The group the binding is bound at. */
  groupUid: string;
  /** From `groupUid` down to the asked group, both included. */
  path: string[];
  /** `groupUid` as a path of names, where the caller may see it (see PathBook). */
  groupPath?: string;
  /** The role as a path of names (a built-in: its name), where the caller may list it. */
  rolePath?: string;
  /** A conditional binding's condition, as evaluated for this check (see CheckResult). */
  condition?: ExplainedCondition;
  /**
   * A conditional binding's condition where nothing evaluates it (who-can, what-can: a
   * list has no request to decide it on).
   */
  when?: Condition;
}

/** A binding's condition with its result for one check and the values it read. */
export interface ExplainedCondition {
  expression: string;
  title?: string;
  description?: string;
  result: boolean;
  /** Each variable read, by dotted name (`resource.group.path`), with its value. */
  values: Record<string, ConditionValue>;
  /** Why it did not evaluate (then `result` is false), with the position. */
  error?: string;
}

/**
 * A binding the identity holds at the asked group or above that does not grant what was
 * asked: why a check is denied, nearest the group first.
 */
export interface HeldBinding extends GrantProof {
  /** What its role grants; empty when the caller may not list the role. */
  roleCapabilities: Capability[];
}

/**
 * A scheduled binding that has not started: it would grant what was asked from `notBefore`
 * (a check answers from the bindings that grant now, so it is not among the proofs).
 */
export interface PendingGrant extends GrantProof {
  /** When it starts to grant. */
  notBefore: Date;
  /** When it stops; absent: never. */
  expireTime?: Date;
}

/**
 * How much of the asked group's path an answer counts. An answer counts only the bindings
 * the caller may list; where its `role_bindings.list` does not reach the organization's
 * root, bindings above what it reaches are left out, and the answer says so: `partial`,
 * with `countedFrom` the topmost group on the path from which it counts bindings (absent
 * when it reaches no group on the path: only the caller's own bindings count). Decided
 * from the caller's grants alone, never from whether anything is hidden, so it reveals
 * nothing. Both absent: the answer is whole.
 */
export interface Coverage {
  partial?: true;
  countedFrom?: string;
}

export interface CheckRequest {
  /** Absent: the caller itself. */
  identityUid?: string;
  capability: Capability;
  groupUid: string;
  /**
   * The request asked about, for conditional bindings' `resource` and `token.claims`
   * (absent: "" and none). Evaluated in the proof only; never what the caller may do.
   */
  resource?: { type: string; name: string };
  claims?: Record<string, string | number | boolean>;
}

/** The asked identity and group as paths of names, each where the caller may see it. */
export interface AskedPaths {
  identityPath?: string;
  groupPath?: string;
}

export interface CheckResult extends Coverage, AskedPaths {
  identityUid: string;
  capability: Capability;
  groupUid: string;
  allowed: boolean;
  /** Every binding that grants it (empty when denied), by binding uid. */
  grants: GrantProof[];
  /**
   * When denied: the identity's bindings on the group's uid path that the caller may list
   * (the bindings who-can counts), nearest the group first; none grants the capability.
   * Empty when allowed.
   */
  nearest: HeldBinding[];
  /**
   * The identity's scheduled bindings on the path that the caller may list (as `nearest`)
   * and that would grant the capability once started, soonest first. Absent when none.
   */
  pending?: PendingGrant[];
  /**
   * When denied: the conditional bindings the caller may list that hold the capability
   * here but whose condition did not hold for this check (each with its evaluation): they
   * would grant if it held. Absent when none.
   */
  conditional?: GrantProof[];
  /** The caller is a delegated token: whom it acts for and through whom (see ActingFor). */
  actingFor?: ActingFor & {
    /** Whether the asked capability is among those the delegated token may use now. */
    capabilityInScope: boolean;
  };
}

/**
 * "As X for Y": the caller is a delegated token (RFC 8693 `act`), so what it asks is
 * answered for its subject, and acted on through its actors.
 */
export interface ActingFor {
  /** The subject the token acts for. */
  identityUid: string;
  /** The actor chain, the current actor first. */
  actors: string[];
  /** What the token may use now: its scope narrowed by the chain's policies, sorted. */
  capabilities: Capability[];
}

/** An identity holding the asked capability at the asked group only by conditional bindings. */
export interface ConditionalHolder {
  identityUid: string;
  identityPath?: string;
  /** Its conditional bindings that would grant, each with its condition (`when`). */
  grants: GrantProof[];
}

/**
 * A holder's delegation policy: who may act for it with (at most) the asked capability,
 * as the policy's own Get shows it.
 */
export interface HolderDelegation {
  /** The holder whose policy this is. */
  identityUid: string;
  actors: string[];
  capabilities: Capability[];
  maxLifetimeSeconds: number;
}

/** An identity that holds the asked capability at the asked group. */
export interface Holder {
  identityUid: string;
  /** Where the caller may list the identity: its path of names. */
  identityPath?: string;
  grants: GrantProof[];
}

/** What an identity holds at one group it is bound at, and so everywhere below it. */
export interface GroupAccess extends Coverage {
  groupUid: string;
  /** Where the caller may list the group: its path of names. */
  groupPath?: string;
  /** The roles bound here, by binding (`rolePath` where the caller may list the role). */
  bindings: { bindingUid: string; role: RoleRef; rolePath?: string }[];
  /** What the bindings here grant, sorted. */
  capabilities: Capability[];
  /**
   * What the identity holds here and below: these and what groups above grant, sorted
   * (partial: only from groups at or below `countedFrom`).
   */
  effectiveCapabilities: Capability[];
  /**
   * The conditional bindings here, apart: each grants its capabilities only on a decision
   * where its condition holds, so none is among `capabilities`. Absent when none.
   */
  conditional?: ConditionalGrant[];
}

/** A conditional binding at a group, with what it grants when its condition holds. */
export interface ConditionalGrant {
  bindingUid: string;
  role: RoleRef;
  rolePath?: string;
  when: Condition;
  capabilities: Capability[];
}

/** What who-can and what-can answer beside their page (each absent when there is none). */
export interface AccessExtras {
  /** Who-can: the holders by conditional bindings alone (first page only; see whoCan). */
  conditionalHolders?: ConditionalHolder[];
  /** Who-can: there are more conditional holders than `conditionalHolders` shows. */
  conditionalHoldersTruncated?: true;
  /** Who-can: the delegation policies of the page's holders that the caller may read. */
  delegations?: HolderDelegation[];
  /** What-can: the caller is a delegated token. */
  actingFor?: ActingFor;
}

/** At most this many conditional holders a who-can answer lists (on its first page). */
export const MAX_CONDITIONAL_HOLDERS = 100;

export const MAX_BATCH_CHECKS = 100;

/** Who-can: one page of identities, by uid; `group` and `capability` are required. */
export const WHO_CAN_LIST: ListSpec = {
  kind: 'access.who_can',
  orderBy: ['uid'],
  defaultOrder: { field: 'uid', direction: 'asc' },
  filters: { group: 'uid', capability: 'string' },
};

/** What-can: one page of groups an identity is bound at, by uid; `identity` defaults to the caller. */
export const WHAT_CAN_LIST: ListSpec = {
  kind: 'access.what_can',
  orderBy: ['uid'],
  defaultOrder: { field: 'uid', direction: 'asc' },
  filters: { identity: 'uid' },
};
