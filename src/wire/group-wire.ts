import { z } from 'zod';
import type { Group } from '../resources/groups/group.js';
import { timestampSchema, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

const resourceLimits = z.record(z.string(), z.int());

export const groupV2Schema = z
  .object({
    uid: uidSchema,
    name: z.string(),
    description: z.string(),
    resourceLimits,
    verified: z.boolean(),
    createTime: timestampSchema,
    updateTime: timestampSchema,
  })
  .meta({ description: 'A group: an organization (a root) or a folder below one.' });
export type GroupV2 = z.infer<typeof groupV2Schema>;

export const groupV1Schema = z.object({
  id: uidSchema,
  name: z.string(),
  description: z.string(),
  resourceLimits,
  verified: z.boolean(),
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
});
export type GroupV1 = z.infer<typeof groupV1Schema>;

export function groupV2(g: Group): GroupV2 {
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

export function groupV1(g: Group): GroupV1 {
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
