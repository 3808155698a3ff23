import { z } from 'zod';
import { descriptionSchema, nameSchema } from '../validate.js';

/** Create body: the resource fields only; the parent is in the path. */
export const groupCreateSchema = z.strictObject({
  name: nameSchema,
  description: descriptionSchema.optional(),
});
/** The fields an update may set, after the field mask has been resolved. */
export const groupPatchSchema = groupCreateSchema.partial();
