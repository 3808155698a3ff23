import type { ListSpec } from '../../core/list-request.js';
import type { Visibility } from '../../core/visibility.js';
import type { PageQuery, StorePage } from '../list-types.js';
import type { Tx } from '../tx.js';

/** What a finding is about: a role binding, or an identity. */
export type UnusedKind = 'roleBinding' | 'identity';

/**
 * A live role binding that granted no decision, or an identity that did not authenticate,
 * since before the window began. Never used: counted from `createTime`, or for a scheduled
 * binding from the later of `createTime` and `notBefore` (it could not be used before it
 * started), so a binding that has not started is never a finding.
 */
export interface UnusedFinding {
  kind: UnusedKind;
  uid: string;
  /** The group it hangs under (null: a root-level person's identity). */
  groupUid: string | null;
  /** The binding's identity; an identity's own uid. */
  identityUid: string;
  /** The binding's role (absent for an identity). */
  roleUid?: string;
  createTime: Date;
  /** Absent: never used since it was created. */
  lastUsedTime?: Date;
  /** The binding's expiry, when it has one already. */
  expireTime?: Date;
  /** A scheduled binding's start. */
  notBefore?: Date;
  /**
   * The one-step remedy: the live bindings (the caller may list) to expire in N days
   * through the binding update path (`PATCH …/roleBindings/{uid}` with `expireTime`):
   * the binding itself, or every binding of the identity.
   */
  expireBindings: string[];
}

/** `access:unused`: by uid; `window` (`Nd`, 1–365 days, default 90d), `group`, `kind`. */
export const UNUSED_LIST: ListSpec = {
  kind: 'access.unused',
  orderBy: ['uid'],
  defaultOrder: { field: 'uid', direction: 'asc' },
  filters: { group: 'uid', window: 'string', kind: 'string' },
};

/** What the caller may see: bindings where it may list them, identities likewise. */
export interface UnusedView {
  bindings: Visibility;
  identities: Visibility;
}

/** The query of one findings page, besides the page itself. */
export interface UnusedQuery {
  /** Unused means not used at or after this instant. */
  cutoff: Date;
  /** Only findings at or below this group. */
  group?: string;
  kind?: UnusedKind;
  view: UnusedView;
}

export interface UnusedAccessStore {
  /** One keyset page of findings (without `expireBindings`) and their exact number. */
  unusedPage(
    tx: Tx,
    u: UnusedQuery,
    q: PageQuery,
  ): Promise<StorePage<Omit<UnusedFinding, 'expireBindings'>>>;
  /** The live (started, unexpired) bindings of `identityUids` the caller may list, by identity. */
  liveBindingsOf(
    tx: Tx,
    identityUids: readonly string[],
    bindings: Visibility,
  ): Promise<Map<string, string[]>>;
}
