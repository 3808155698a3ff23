import { z } from 'zod';
import {
  GROUP_INVITE_LIST,
  GROUP_INVITE_OUTPUT_ONLY,
  GROUP_INVITE_TYPE,
  GROUP_INVITE_UPDATE,
  type CreatedGroupInvite,
  type GroupInvite,
} from '../resources/group-invites/group-invite.js';
import { kind } from './kinds.js';
import { timestampSchema, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

type AnyInvite = GroupInvite | CreatedGroupInvite;

const code = z
  .string()
  .meta({ description: 'The secret to redeem: only in the create response, never again.' });
const ref = { name: z.string(), description: z.string() };

/** v2: `ttl` is input only and never returned; `role` is hydrated from the role. */
export const groupInviteV2Schema = z
  .object({
    uid: uidSchema,
    roleUid: uidSchema,
    role: z.object({ uid: uidSchema, ...ref }).optional(),
    email: z.string().optional(),
    expirationTime: timestampSchema,
    singleUse: z.boolean(),
    code: code.optional(),
    createTime: timestampSchema,
    updateTime: timestampSchema,
  })
  .meta({ description: 'An invitation to join a group with a role.' });
export type GroupInviteV2 = z.infer<typeof groupInviteV2Schema>;

/** v1 `GroupInvite`/`StoredGroupInvite`: `id`, `expiration`, a v1 role (`id`), `email`. */
export const groupInviteV1Schema = z.object({
  id: uidSchema,
  expiration: timestampSchema,
  role: z.object({ id: uidSchema, ...ref }).optional(),
  email: z.string().optional(),
  code: code.optional(),
});
export type GroupInviteV1 = z.infer<typeof groupInviteV1Schema>;

/** The code exists only on the create response; every other response lacks it. */
function codeOf(i: AnyInvite) {
  return 'code' in i ? { code: i.code } : {};
}

export function groupInviteV2(i: AnyInvite): GroupInviteV2 {
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

export function groupInviteV1(i: AnyInvite): GroupInviteV1 {
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

/**
 * An invite's server-owned fields: those neither Create nor Update takes (`expirationTime`
 * is worked out from `ttl` at Create, and an Update may bring it forward).
 */
const INVITE_SERVER_OWNED = GROUP_INVITE_OUTPUT_ONLY.filter((f) =>
  GROUP_INVITE_UPDATE.outputOnly.includes(f),
);

/** The kind's descriptor (wire/kinds.ts), read by its REST and gRPC mounts and the presenter. */
export const GROUP_INVITE_KIND = kind({
  type: GROUP_INVITE_TYPE,
  name: 'GroupInvite',
  plural: 'groupInvites',
  path: '/iam/v2beta1/groupInvites',
  spec: GROUP_INVITE_LIST,
  wireSchema: groupInviteV2Schema,
  toWire: groupInviteV2,
  outputOnly: INVITE_SERVER_OWNED,
});
