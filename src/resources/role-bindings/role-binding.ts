import type { ListSpec } from '../../core/list-request.js';
import type { UpdateSpec } from '../../core/field-mask.js';
import type { Condition } from '../../auth/condition.js';

/**
 * A role granted to an identity at a group (and so everywhere below it). Read back with
 * its identity, group and role hydrated by the same query.
 */
export interface RoleBinding {
  uid: string;
  /** The group the binding grants at; the uid hangs under it. */
  parentUid: string;
  identity: {
    uid: string;
    name: string;
    description: string;
    /** The claim-match subject or subject pattern, or the static-keys subject. */
    subject: string;
    issuer: string;
  };
  group: { uid: string; name: string; description: string };
  role: { uid: string; name: string; description: string };
  createTime: Date;
  updateTime: Date;
  /** From this instant the binding grants nothing; listed as expired until swept. */
  expireTime?: Date;
  /** A scheduled grant: before this instant the binding grants nothing; absent: from creation. */
  notBefore?: Date;
  /**
   * A conditional binding: it grants only on a decision for which this CEL expression holds
   * (docs/api.md, "Conditional role bindings"). Set once, at create.
   */
  condition?: Condition;
}

/** Whether `b` is scheduled and has not started at `now` (epoch ms). */
export function isPending(b: Pick<RoleBinding, 'notBefore'>, now = Date.now()): boolean {
  return b.notBefore !== undefined && now < b.notBefore.getTime();
}

/** Whether `b` has expired at `now` (epoch ms). */
export function isExpired(b: Pick<RoleBinding, 'expireTime'>, now = Date.now()): boolean {
  return b.expireTime !== undefined && b.expireTime.getTime() <= now;
}

export const ROLE_BINDING_TYPE = 'iam.arbor.dev/RoleBinding';

export const ROLE_BINDING_LIST: ListSpec = {
  kind: 'role_bindings',
  orderBy: ['uid', 'created_at'],
  defaultOrder: { field: 'uid', direction: 'asc' },
  filters: { identity: 'uid', group: 'uid', role: 'uid' },
};

export const ROLE_BINDING_UPDATE: UpdateSpec = {
  // expireTime reset by a mask (absent from the body) leaves it as it is: never removed.
  mutable: { identityUid: '', roleUid: '', expireTime: undefined },
  outputOnly: ['uid', 'identity', 'group', 'role', 'createTime', 'expired', 'pending'],
};
