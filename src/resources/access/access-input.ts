import { z } from 'zod';
import { isCapability, type Capability } from '../../auth/capabilities.js';
import { isValidUidp } from '../../core/uidp.js';
import { MAX_BATCH_CHECKS, type CheckRequest } from './access.js';

const uid = (name: string) =>
  z
    .string({ error: `${name} must be a uid` })
    .refine(isValidUidp, { error: `${name} must be a uid path` });

export const capabilitySchema = z
  .string({ error: 'capability is required' })
  .refine((s): s is Capability => isCapability(s), { error: 'capability is not a capability' })
  .transform((s) => s as Capability);

export const checkSchema = z.strictObject({
  identityUid: uid('identityUid').optional(),
  capability: capabilitySchema,
  groupUid: uid('groupUid'),
});

export const batchCheckSchema = z.strictObject({
  checks: z
    .array(checkSchema, { error: 'checks must be an array' })
    .min(1, { error: 'checks must hold at least one check' })
    .max(MAX_BATCH_CHECKS, { error: `checks may hold at most ${MAX_BATCH_CHECKS} checks` }),
});

const CHECK_FIELDS = new Set(['identityUid', 'capability', 'groupUid']);

/**
 * A check body that `checkSchema` accepts as it is, read without zod (the check is a hot
 * path); undefined for anything else, which `parseInput(checkSchema, …)` then refuses with
 * its field violations. Every field is a uid path or a known capability, so none can hold
 * the text `parseInput` refuses first.
 */
export function plainCheck(body: Record<string, unknown>): CheckRequest | undefined {
  for (const key of Object.keys(body)) if (!CHECK_FIELDS.has(key)) return undefined;
  const { identityUid, capability, groupUid } = body;
  if (typeof capability !== 'string' || !isCapability(capability)) return undefined;
  if (typeof groupUid !== 'string' || !isValidUidp(groupUid)) return undefined;
  if (identityUid === undefined) return { capability, groupUid };
  if (typeof identityUid !== 'string' || !isValidUidp(identityUid)) return undefined;
  return { identityUid, capability, groupUid };
}
