import { z } from 'zod';
import { issuerProblem } from '../identities/claim-match.js';
import { descriptionSchema, nameSchema } from '../validate.js';

const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** The issuer rule identities use: https (http too when insecure issuers are allowed). */
function issuerSchema(allowInsecure: boolean) {
  return z
    .string({ error: 'issuer is required' })
    .max(2048, { error: 'issuer must be at most 2048 characters' })
    .superRefine((s, ctx) => {
      const why = issuerProblem(s, allowInsecure);
      if (why !== undefined) ctx.addIssue({ code: 'custom', message: `issuer ${why}` });
    });
}

function oidcSchema(allowInsecure: boolean) {
  return z.strictObject({
    issuer: issuerSchema(allowInsecure),
    clientId: z
      .string({ error: 'clientId is required' })
      .min(1, { error: 'clientId is required' })
      .max(256, { error: 'clientId must be at most 256 characters' }),
    clientSecret: z
      .string({ error: 'clientSecret must be a string' })
      .max(1024, { error: 'clientSecret must be at most 1024 characters' })
      .optional(),
    additionalScopes: z
      .array(z.string().regex(SCOPE, { error: 'each scope must be a non-empty OAuth scope token' }))
      .max(32, { error: 'additionalScopes may hold at most 32 scopes' })
      .optional(),
    pkceEnabled: z.boolean({ error: 'pkceEnabled must be a boolean' }).optional(),
  });
}

const defaultRoleSchema = z
  .string({ error: 'defaultRole is required' })
  .min(1, { error: 'defaultRole is required' });

/** Create and patch schemas; the issuer rule depends on ARBOR_ALLOW_INSECURE_ISSUERS. */
export function identityProviderSchemas(allowInsecureIssuers: boolean) {
  const oidc = oidcSchema(allowInsecureIssuers);
  const create = z.strictObject({
    name: nameSchema,
    description: descriptionSchema.optional(),
    defaultRole: defaultRoleSchema,
    oidc: oidc.refine((o) => (o.clientSecret ?? '') !== '' || o.pkceEnabled === true, {
      error: 'clientSecret is required unless pkceEnabled is true',
      path: ['clientSecret'],
    }),
  });
  // On update the secret rule needs the stored secret, so the service checks it.
  const patch = z.strictObject({
    name: nameSchema.optional(),
    description: descriptionSchema.optional(),
    defaultRole: defaultRoleSchema.optional(),
    oidc: oidc.optional(),
  });
  return { create, patch };
}

export type IdentityProviderSchemas = ReturnType<typeof identityProviderSchemas>;
export type IdentityProviderPatch = z.infer<IdentityProviderSchemas['patch']>;
export type OidcInput = NonNullable<IdentityProviderPatch['oidc']>;
