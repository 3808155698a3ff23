import { z } from 'zod';
import { CAPABILITIES, isCapability } from '../../auth/capabilities.js';
import { descriptionSchema, nameSchema } from '../validate.js';
import { canonicalCapabilities } from './builtin-roles.js';

/**
 * A non-empty list of capability names from the catalogue. Every problem, including a
 * wrong element type, is reported on `capabilities` itself.
 */
export const capabilitiesSchema = z
  .array(z.unknown(), { error: 'capabilities must be a list of capability names' })
  .min(1, { error: 'capabilities must name at least one capability' })
  .max(CAPABILITIES.length * 4, { error: 'capabilities has too many entries' })
  .superRefine((caps, ctx) => {
    const bad = caps.filter((c) => typeof c !== 'string' || !isCapability(c));
    if (bad.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `unknown capabilities: ${bad.map((c) => JSON.stringify(c)).join(', ')}`,
      });
    }
  })
  .transform((caps) => canonicalCapabilities(caps as string[]))
  // The check above is the validation; this tells the API document what it accepts.
  .meta({ items: { type: 'string', enum: CAPABILITIES } });

export const roleCreateSchema = z.strictObject({
  name: nameSchema,
  description: descriptionSchema.optional(),
  capabilities: capabilitiesSchema,
});
export const rolePatchSchema = roleCreateSchema.partial();
