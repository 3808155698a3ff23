import type {
  CreatedGroupInvite,
  GroupInvite,
} from '../../resources/group-invites/group-invite.js';
import { ts } from './time.js';

type AnyInvite = GroupInvite | CreatedGroupInvite;

/** The code exists only on the create response; every other response lacks it. */
function codeOf(i: AnyInvite) {
  return 'code' in i ? { code: i.code } : {};
}

/** v2: `ttl` is input only and never returned; `role` is hydrated from the role. */
export function groupInviteV2(i: AnyInvite) {
  return {
    uid: i.uid,
    roleUid: i.roleUid,
    ...(i.role ? { role: i.role } : {}),
    ...(i.email !== null ? { email: i.email } : {}),
    expirationTime: ts(i.expirationTime),
    singleUse: i.singleUse,
    ...codeOf(i),
    createTime: ts(i.createTime),
    updateTime: ts(i.updateTime),
  };
}

/** v1 `GroupInvite`/`StoredGroupInvite`: `id`, `expiration`, a v1 role (`id`), `email`. */
export function groupInviteV1(i: AnyInvite) {
  return {
    id: i.uid,
    expiration: ts(i.expirationTime),
    ...(i.role
      ? { role: { id: i.role.uid, name: i.role.name, description: i.role.description } }
      : {}),
    ...(i.email !== null ? { email: i.email } : {}),
    ...codeOf(i),
  };
}
