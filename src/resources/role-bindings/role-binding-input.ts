import { z } from 'zod';
import type { FieldViolation } from '../../core/rpc-error.js';
import { isRootUid, isSelfOrBelow, isValidUidp, parentOf } from '../../core/uidp.js';
import { instantSchema } from '../instant-input.js';
import { MAX_CONDITION_LENGTH } from '../../auth/condition.js';

const uidField = z
  .string({ error: 'must be a uid' })
  .refine(isValidUidp, { error: 'must be a uid path' });

/** When a binding stops granting: an RFC 3339 instant, in the future when it is created. */
export const expireTimeSchema = instantSchema().refine((d) => d.getTime() > Date.now(), {
  error: 'expireTime must be in the future',
});

/** When a scheduled binding starts granting: an RFC 3339 instant (a past one: at once). */
export const notBeforeSchema = instantSchema();

const refs = { identityUid: uidField, roleUid: uidField };

/**
 * A binding's condition as given: the expression bounded here, and checked against the
 * environment by the service (`compileCondition`), which names the position of a fault.
 */
export const conditionSchema = z.strictObject({
  expression: z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(MAX_CONDITION_LENGTH, { error: `must be at most ${MAX_CONDITION_LENGTH} characters` }),
  title: z.string().max(200).optional(),
  description: z.string().max(1000).optional(),
});

/** Where both ends are set the window must not be empty. */
function windowIsOrdered(w: { notBefore?: Date; expireTime?: Date }): boolean {
  return !w.notBefore || !w.expireTime || w.notBefore.getTime() < w.expireTime.getTime();
}

export const roleBindingCreateSchema = z
  .strictObject({
    ...refs,
    expireTime: expireTimeSchema.optional(),
    notBefore: notBeforeSchema.optional(),
    condition: conditionSchema.optional(),
  })
  .refine(windowIsOrdered, {
    path: ['notBefore'],
    error: 'notBefore must be before expireTime',
  });
/**
 * An update re-points a binding, or brings its expiry forward (the unused-access remedy,
 * "expire in N days"): the window is set at create; an update may only shorten its end.
 */
export const roleBindingPatchSchema = z
  .strictObject({ ...refs, expireTime: expireTimeSchema })
  .partial();

const orgOf = (uid: string) => uid.slice(0, 40);

/**
 * Where a binding at `groupUid` may point, decided from the uids alone (so answering
 * reveals nothing about other organizations): the identity is root-level or in the
 * group's organization; the role is built-in (flat uid) or defined at the group or above.
 */
export function placementViolations(
  groupUid: string,
  identityUid: string,
  roleUid: string,
): FieldViolation[] {
  const out: FieldViolation[] = [];
  if (!isRootUid(identityUid) && orgOf(identityUid) !== orgOf(groupUid)) {
    out.push({
      field: 'identityUid',
      description: "identity must belong to the group's organization",
    });
  }
  const roleGroup = parentOf(roleUid);
  if (roleGroup !== undefined && !isSelfOrBelow(roleGroup, groupUid)) {
    out.push({
      field: 'roleUid',
      description: "role must be built in or defined at the binding's group or above it",
    });
  }
  return out;
}
