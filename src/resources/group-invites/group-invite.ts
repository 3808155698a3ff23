import type { UpdateSpec } from '../../core/field-mask.js';
import type { ListSpec } from '../../core/list-request.js';
import type { RoleRef } from '../roles/role.js';

/**
 * An invitation to join a group with a role. Whoever redeems its code (and, for a
 * single-use invite, only the first) is bound to `roleUid` at the group.
 */
export interface GroupInvite {
  uid: string;
  parentUid: string;
  roleUid: string;
  /** Hydrated from the role; null only if the role vanished (invites cascade with roles). */
  role: RoleRef | null;
  email: string | null;
  singleUse: boolean;
  expirationTime: Date;
  /** When a single-use invite was redeemed; null while it is unused. */
  usedTime: Date | null;
  createTime: Date;
  /** Last change: an update of its role or expiry, or its redemption. */
  updateTime: Date;
}

/** The create response: the only time the code is ever shown. */
export interface CreatedGroupInvite extends GroupInvite {
  code: string;
}

export const GROUP_INVITE_TYPE = 'iam.arbor.dev/GroupInvite';

/** The platform lists invites newest first by default. */
export const GROUP_INVITE_LIST: ListSpec = {
  kind: 'groupInvites',
  orderBy: ['uid', 'created_at'],
  defaultOrder: { field: 'created_at', direction: 'desc' },
  filters: { group: 'uid' },
};

/** Fields a client may echo back from a response; they are never taken from input. */
export const GROUP_INVITE_OUTPUT_ONLY = [
  'uid',
  'role',
  'expirationTime',
  'code',
  'createTime',
  'updateTime',
] as const;

/**
 * Update: the role and the expiry (AIP-134 mask rules as everywhere). Echoed fields that
 * are fixed at creation (email, singleUse) are ignored; a mask naming them is refused.
 */
export const GROUP_INVITE_UPDATE: UpdateSpec = {
  mutable: { roleUid: '', expirationTime: '' },
  outputOnly: ['uid', 'role', 'code', 'createTime', 'updateTime', 'email', 'singleUse', 'ttl'],
};

export const MIN_TTL_MS = 60_000;
export const MAX_TTL_MS = 30 * 24 * 60 * 60 * 1000;
