import { z } from 'zod';
import type { UnusedFinding } from '../resources/usage/unused-access.js';
import { timestampSchema, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

export const unusedFindingSchema = z
  .object({
    kind: z.enum(['roleBinding', 'identity']),
    uid: uidSchema,
    groupUid: uidSchema.nullable().meta({
      description: 'The group it hangs under (null: a root-level person’s identity).',
    }),
    identityUid: uidSchema.meta({ description: "The binding's identity; an identity's own uid." }),
    roleUid: uidSchema.optional().meta({ description: "The binding's role." }),
    createTime: timestampSchema,
    lastUsedTime: timestampSchema.optional().meta({
      description:
        'When the binding last granted a decision, or the identity last authenticated; ' +
        'absent: never since it started (the window counts from createTime, or from ' +
        'notBefore when that is later: a binding cannot be used before it starts).',
    }),
    expireTime: timestampSchema
      .optional()
      .meta({ description: 'The binding’s expiry, when it has one already.' }),
    notBefore: timestampSchema
      .optional()
      .meta({ description: 'A scheduled binding’s start, when it has one.' }),
    expireBindings: z.array(uidSchema).meta({
      description:
        'The one-step remedy: the live bindings to expire (the binding itself, or every ' +
        'started binding of the identity the caller may list), each by `PATCH ' +
        '/iam/v2beta1/roleBindings/{uid}?updateMask=expireTime` with `expireTime` N days ' +
        'from now; `arbor access unused --expire-in Nd` does it.',
    }),
  })
  .meta({
    description:
      'A live role binding that granted no decision, or an identity that did not ' +
      'authenticate, within the window.',
  });

export function unusedFindingV2(f: UnusedFinding): z.output<typeof unusedFindingSchema> {
  return {
    kind: f.kind,
    uid: f.uid,
    groupUid: f.groupUid,
    identityUid: f.identityUid,
    ...(f.roleUid === undefined ? {} : { roleUid: f.roleUid }),
    createTime: ts(f.createTime),
    ...(f.lastUsedTime === undefined ? {} : { lastUsedTime: ts(f.lastUsedTime) }),
    ...(f.expireTime === undefined ? {} : { expireTime: ts(f.expireTime) }),
    ...(f.notBefore === undefined ? {} : { notBefore: ts(f.notBefore) }),
    expireBindings: [...f.expireBindings],
  };
}
