import type { Capability } from '../../auth/capabilities.js';
import type { Condition } from '../../auth/condition.js';
import type { Visibility } from '../../core/visibility.js';
import type { PageQuery, StorePage } from '../list-types.js';
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
  /** Epoch ms from which the binding grants nothing (its `expireTime`); absent: never. */
  expiresAt?: number;
  /** Epoch ms from which the binding grants (its `notBefore`); absent: from creation. */
  startsAt?: number;
  /** A conditional binding's condition: it grants only on a decision where it holds. */
  condition?: Condition;
}

/**
 * A binding's window as a grant carries it: `expireTime` and `notBefore` (absent or null:
 * unbounded on that side) as epoch ms, so a remembered grant lapses and begins on time.
 */
export function grantWindow(
  expireTime: Date | null | undefined,
  notBefore: Date | null | undefined,
): { expiresAt?: number; startsAt?: number } {
  return {
    ...(expireTime ? { expiresAt: expireTime.getTime() } : {}),
    ...(notBefore ? { startsAt: notBefore.getTime() } : {}),
  };
}

/**
 * What a caller may learn of bindings, as filters the database applies: a binding counts
 * when it is `self`'s own or lies where the caller may list role bindings, and its identity
 * is `self` or lies where the caller may list identities.
 */
export interface SeenBy {
  self?: string;
  bindings: Visibility;
  identities: Visibility;
}

/** What one check reads of the database. */
export interface CheckFacts {
  groupExists: boolean;
  identityExists: boolean;
  /**
   * The identity's unexpired bindings at the group or above it, by uid: scheduled ones (not
   * started) included, which grant nothing yet; readers keep those `isLive` now.
   */
  bindings: BindingGrant[];
}

/** What the access service reads; live bindings only (expired ones grant nothing). */
export interface AccessStore {
  /** One check's facts in one round trip (see CheckFacts). */
  checkFacts(tx: Tx, identityUid: string, groupUid: string): Promise<CheckFacts>;
  identityExists(tx: Tx, uid: string): Promise<boolean>;
  /** Which of `uids` are groups that exist. */
  existingGroups(tx: Tx, uids: readonly string[]): Promise<Set<string>>;
  /**
   * Every unexpired binding of one identity, scheduled ones (not started) included, so that
   * a remembered answer starts to grant on time: readers keep those `isLive` now.
   */
  bindingsOf(tx: Tx, identityUid: string): Promise<BindingGrant[]>;
  /**
   * One keyset page of the identities (uids, in `q.order`) holding `cap` at `groupUid` by a
   * live binding there or above that counts for the caller (`seen`), with their exact number.
   */
  holdersPage(
    tx: Tx,
    groupUid: string,
    cap: Capability,
    seen: SeenBy,
    q: PageQuery,
  ): Promise<StorePage<string>>;
  /** The bindings behind `holdersPage` for some of its identities, by identity then uid. */
  bindingsGranting(
    tx: Tx,
    groupUid: string,
    cap: Capability,
    seen: SeenBy,
    identityUids: readonly string[],
  ): Promise<BindingGrant[]>;
  /**
   * The live conditional bindings at `groupUid` or above whose role holds `cap`, that count
   * for the caller (`seen`), of the first `limit` identities (by uid) that hold `cap` there
   * only by such bindings (none unconditional that counts for the caller), by identity then
   * uid; `more` when there are further such identities.
   */
  conditionalGranting(
    tx: Tx,
    groupUid: string,
    cap: Capability,
    seen: SeenBy,
    limit: number,
  ): Promise<{ bindings: BindingGrant[]; more: boolean }>;
  /** The delegation policies of `identityUids` (those that have one), by identity uid. */
  delegationPolicies(tx: Tx, identityUids: readonly string[]): Promise<StoredDelegation[]>;
}

/** A delegation policy as access answers show it (resources/delegation holds the record). */
export interface StoredDelegation {
  identityUid: string;
  actors: string[];
  capabilities: Capability[];
  maxLifetimeSeconds: number;
}
