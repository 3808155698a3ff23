import type { Identity } from '../../resources/identities/identity.js';
import { ts } from './time.js';

/** The relationship members, shared by v2 and v1 (proto3 JSON is camelCase in both). */
function relationship(i: Identity) {
  return {
    ...(i.claimMatch ? { claimMatch: i.claimMatch } : {}),
    ...(i.staticKeys
      ? { staticKeys: { ...i.staticKeys, expirationTime: ts(i.staticKeys.expirationTime) } }
      : {}),
  };
}

export function identityV2(i: Identity) {
  return {
    uid: i.uid,
    name: i.name,
    description: i.description,
    ...relationship(i),
    lastSeenTime: ts(i.lastSeenTime),
    createTime: ts(i.createTime),
    updateTime: ts(i.updateTime),
  };
}

export function identityV1(i: Identity) {
  return {
    id: i.uid,
    name: i.name,
    description: i.description,
    ...relationship(i),
    createdAt: ts(i.createTime),
    updatedAt: ts(i.updateTime),
  };
}
