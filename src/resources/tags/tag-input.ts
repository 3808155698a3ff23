import { z } from 'zod';
import { DIGEST_PATTERN, TAG_NAME_PATTERN } from './tag.js';

/**
 * Create-or-update body. `deprecated` left out keeps the stored value on an update and
 * is false on a create.
 */
export const tagPutSchema = z.strictObject({
  name: z.string({ error: 'name is required' }).regex(TAG_NAME_PATTERN, {
    error:
      'name must be 1 to 128 letters, digits, dots, dashes or underscores, not starting with a dot or dash',
  }),
  digest: z.string({ error: 'digest is required' }).regex(DIGEST_PATTERN, {
    error: 'digest must be sha256: followed by 64 lowercase hexadecimal digits',
  }),
  deprecated: z.boolean({ error: 'deprecated must be a boolean' }).optional(),
});
