import { z } from 'zod';
import { isExpired, isPending, type RoleBinding } from '../resources/role-bindings/role-binding.js';
import { timestampSchema, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

const ref = { name: z.string(), description: z.string() };

export const bindingConditionSchema = z
  .object({
    expression: z.string().meta({
      description:
        'A CEL expression over request.time, request.capability, resource.group, ' +
        'resource.type, resource.name and token.claims; at most 1,000 characters.',
    }),
    title: z.string().optional(),
    description: z.string().optional(),
  })
  .meta({
    description:
      'A conditional binding grants only on a decision for which its expression holds; ' +
      'where a decision has no request to evaluate it over (lists), it grants nothing. ' +
      'Set once, at create.',
  });

export const roleBindingV2Schema = z
  .object({
    uid: uidSchema,
    identity: z.object({ uid: uidSchema, ...ref, subject: z.string(), issuer: z.string() }),
    group: z.object({ uid: uidSchema, ...ref }),
    role: z.object({ uid: uidSchema, ...ref }),
    createTime: timestampSchema,
    expireTime: timestampSchema.optional().meta({
      description: 'From this instant the binding grants nothing; absent: it never expires.',
    }),
    expired: z.boolean().meta({
      description: 'The binding has passed its expireTime: it grants nothing until swept.',
    }),
    notBefore: timestampSchema.optional().meta({
      description:
        'A scheduled grant: before this instant the binding grants nothing; absent: it grants ' +
        'from creation. Set once, at create, and before expireTime.',
    }),
    pending: z.boolean().optional().meta({
      description: 'Present and true while the binding has not reached its notBefore.',
    }),
    condition: bindingConditionSchema.optional(),
  })
  .meta({ description: 'A role granted to an identity at a group, its references hydrated.' });
export type RoleBindingV2 = z.infer<typeof roleBindingV2Schema>;

export const roleBindingV1Schema = z.object({
  id: uidSchema,
  identity: uidSchema,
  group: z.object({ id: uidSchema, ...ref }),
  role: z.object({ id: uidSchema, ...ref }),
  claimMatchIssuer: z.string(),
  claimMatchSubject: z.string(),
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
});
export type RoleBindingV1 = z.infer<typeof roleBindingV1Schema>;

/** v2: hydrated references and `createTime` only (the spec's one exception). */
export function roleBindingV2(b: RoleBinding): RoleBindingV2 {
  return {
    uid: b.uid,
    identity: b.identity,
    group: b.group,
    role: b.role,
    createTime: ts(b.createTime),
    ...(b.expireTime ? { expireTime: ts(b.expireTime) } : {}),
    expired: isExpired(b),
    ...(b.notBefore ? { notBefore: ts(b.notBefore), pending: isPending(b) } : {}),
    ...(b.condition ? { condition: b.condition } : {}),
  };
}

/** v1: the identity by id with its claim-match fields flattened, group and role embedded. */
export function roleBindingV1(b: RoleBinding): RoleBindingV1 {
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
