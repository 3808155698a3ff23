import type { Role } from '../../resources/roles/role.js';
import { ts } from './time.js';

export function roleV2(r: Role) {
  return {
    uid: r.uid,
    name: r.name,
    description: r.description,
    capabilities: r.capabilities,
    createTime: ts(r.createTime),
    updateTime: ts(r.updateTime),
  };
}

export function roleV1(r: Role) {
  return {
    id: r.uid,
    name: r.name,
    description: r.description,
    capabilities: r.capabilities,
    createdAt: ts(r.createTime),
    updatedAt: ts(r.updateTime),
  };
}
