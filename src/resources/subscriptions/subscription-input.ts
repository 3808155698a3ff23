import { z } from 'zod';
import { descriptionSchema, nameSchema } from '../validate.js';

const EVENT_TYPE = /^(\*|[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*)?)$/;

const sinkSchema = z
  .string({ error: 'sink is required' })
  .max(2048, { error: 'sink must be at most 2048 characters' })
  .refine(
    (s) => {
      try {
        const u = new URL(s);
        return (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password;
      } catch {
        return false;
      }
    },
    { error: 'sink must be an http(s) URL without credentials' },
  );

const typesSchema = z
  .array(
    z.string().regex(EVENT_TYPE, {
      error:
        'types entries are event types like dev.arbor.iam.group.created.v1, or a prefix ending in *',
    }),
    { error: 'types must be a list of event types' },
  )
  .max(32, { error: 'types may name at most 32 event types' });

export const subscriptionCreateSchema = z.strictObject({
  name: nameSchema,
  description: descriptionSchema.optional(),
  sink: sinkSchema,
  types: typesSchema.optional(),
});
export const subscriptionPatchSchema = subscriptionCreateSchema.partial();
export type SubscriptionPatch = z.infer<typeof subscriptionPatchSchema>;
