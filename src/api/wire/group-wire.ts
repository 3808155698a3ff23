import type { Group } from '../../resources/groups/group.js';
import { ts } from './time.js';

export function groupV2(g: Group) {
  return {
    uid: g.uid,
    name: g.name,
    description: g.description,
    resourceLimits: g.resourceLimits,
    verified: g.verified,
    createTime: ts(g.createTime),
    updateTime: ts(g.updateTime),
  };
}

export function groupV1(g: Group) {
  return {
    id: g.uid,
    name: g.name,
    description: g.description,
    resourceLimits: g.resourceLimits,
    verified: g.verified,
    createdAt: ts(g.createTime),
    updatedAt: ts(g.updateTime),
  };
}
