import { z } from 'zod';
import { descriptionSchema, nameSchema } from '../validate.js';

const GUID = /^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$/;
const COMPONENT = /^[A-Za-z0-9._-]{1,63}$/;

const amazonSchema = z.strictObject({
  account: z
    .string({ error: 'account is required' })
    .regex(/^[0-9]{12}$/, { error: 'account must be a 12-digit AWS account id' }),
});

const googleSchema = z
  .strictObject({
    projectId: z
      .string({ error: 'projectId must be a string' })
      .regex(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, {
        error: 'projectId must be a Google Cloud project id (6-30 lowercase letters, digits, -)',
      })
      .optional(),
    projectNumber: z
      .string({ error: 'projectNumber must be a string' })
      .regex(/^[0-9]{1,20}$/, { error: 'projectNumber must be a decimal number' })
      .optional(),
  })
  .refine((g) => g.projectId !== undefined || g.projectNumber !== undefined, {
    error: 'projectId or projectNumber is required',
    path: ['projectId'],
  });

const azureSchema = z.strictObject({
  tenantId: z
    .string({ error: 'tenantId is required' })
    .regex(GUID, { error: 'tenantId must be a UUID' }),
  clientIds: z
    .record(
      z.string().regex(COMPONENT, { error: 'clientIds keys must be component names' }),
      z.string({ error: 'clientIds values must be strings' }).regex(GUID, {
        error: 'clientIds values must be UUIDs',
      }),
    )
    .optional(),
});

/** Create body; null or absent clouds are not associated. The group is in the path. */
export const accountAssociationCreateSchema = z.strictObject({
  name: nameSchema,
  description: descriptionSchema.optional(),
  amazon: amazonSchema.nullable().optional(),
  google: googleSchema.nullable().optional(),
  azure: azureSchema.nullable().optional(),
});
export type AccountAssociationCreate = z.infer<typeof accountAssociationCreateSchema>;

/** The fields an update may set (null clears a cloud), after the mask is resolved. */
export const accountAssociationPatchSchema = accountAssociationCreateSchema.partial();
