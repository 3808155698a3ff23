import { z } from 'zod';
import { isCapability, type Capability } from '../../auth/capabilities.js';
import { isValidUidp } from '../../core/uidp.js';
import { MAX_BATCH_CHECKS } from './access.js';

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
