import { z } from 'zod';
import { descriptionSchema } from '../validate.js';
import { REPO_NAME_MAX, REPO_NAME_PATTERN } from './repo.js';

export const repoNameSchema = z
  .string({ error: 'name is required' })
  .regex(REPO_NAME_PATTERN, {
    error:
      'name must be lowercase letters a-z and digits, in parts joined by one dot, dash or underscore',
  })
  .max(REPO_NAME_MAX, { error: `name must be at most ${REPO_NAME_MAX} characters` });

/** Create body: the resource fields only; the group is in the path. */
export const repoCreateSchema = z.strictObject({
  name: repoNameSchema,
  description: descriptionSchema.optional(),
});
/** The fields an update may set, after the field mask has been resolved. */
export const repoPatchSchema = repoCreateSchema.partial();
export type RepoPatch = z.infer<typeof repoPatchSchema>;
