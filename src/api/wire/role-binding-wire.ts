import type { RoleBinding } from '../../resources/role-bindings/role-binding.js';
import { ts } from './time.js';

/** v2: hydrated references and `createTime` only (the spec's one exception). */
export function roleBindingV2(b: RoleBinding) {
  return {
    uid: b.uid,
    identity: b.identity,
    group: b.group,
    role: b.role,
    createTime: ts(b.createTime),
  };
}

/** v1: the identity by id with its claim-match fields flattened, group and role embedded. */
export function roleBindingV1(b: RoleBinding) {
  return {
    id: b.uid,
    identity: b.identity.uid,
    group: { id: b.group.uid, name: b.group.name, description: b.group.description },
    role: { id: b.role.uid, name: b.role.name, description: b.role.description },
    claimMatchIssuer: b.identity.issuer,
    claimMatchSubject: b.identity.subject,
    createdAt: ts(b.createTime),
    updatedAt: ts(b.updateTime),
  };
}
