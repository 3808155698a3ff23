import { z } from 'zod';
import { CAPABILITIES } from '../auth/capabilities.js';
import type { Role } from '../resources/roles/role.js';
import { timestampSchema, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

const capabilities = z.array(z.enum(CAPABILITIES));

export const roleV2Schema = z
  .object({
    uid: uidSchema,
    name: z.string(),
    description: z.string(),
    capabilities,
    createTime: timestampSchema,
    updateTime: timestampSchema,
  })
  .meta({ description: 'A named set of capabilities: built in (flat uid) or defined at a group.' });
export type RoleV2 = z.infer<typeof roleV2Schema>;

export const roleV1Schema = z.object({
  id: uidSchema,
  name: z.string(),
  description: z.string(),
  capabilities,
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
});
export type RoleV1 = z.infer<typeof roleV1Schema>;

export function roleV2(r: Role): RoleV2 {
  return {
    uid: r.uid,
    name: r.name,
    description: r.description,
    capabilities: r.capabilities,
    createTime: ts(r.createTime),
    updateTime: ts(r.updateTime),
  };
}

export function roleV1(r: Role): RoleV1 {
  return {
    id: r.uid,
    name: r.name,
    description: r.description,
    capabilities: r.capabilities,
    createdAt: ts(r.createTime),
    updatedAt: ts(r.updateTime),
  };
}
