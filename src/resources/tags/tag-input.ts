import { z } from 'zod';
import { DIGEST_PATTERN, TAG_NAME_PATTERN } from './tag.js';

/**
 * Create-or-update body. `deprecated` left out keeps the stored value on an update and
 * is false on a create.
 */
export const tagPutSchema = z.strictObject({
  name: z
    .string({ error: 'name is required' })
    .regex(TAG_NAME_PATTERN, { error: `name must match "${TAG_NAME_PATTERN.source}"` }),
  digest: z
    .string({ error: 'digest is required' })
    .regex(DIGEST_PATTERN, { error: `digest must match "${DIGEST_PATTERN.source}"` }),
  deprecated: z.boolean({ error: 'deprecated must be a boolean' }).optional(),
});
