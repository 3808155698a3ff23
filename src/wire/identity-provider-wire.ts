import { z } from 'zod';
import {
  IDP_LIST,
  IDP_TYPE,
  IDP_UPDATE,
  type IdentityProvider,
} from '../resources/identity-providers/identity-provider.js';
import { kind } from './kinds.js';
import { timestampSchema, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

/** The OIDC block as clients see it: never the client secret, which is write-only. */
const oidcSchema = z.object({
  issuer: z.string(),
  clientId: z.string(),
  additionalScopes: z.array(z.string()),
  pkceEnabled: z.boolean(),
});

const common = {
  name: z.string(),
  description: z.string(),
  defaultRole: z
    .string()
    .meta({ description: 'The uid of the role its users get on first sign-in.' }),
  oidc: oidcSchema,
};

export const identityProviderV2Schema = z
  .object({ uid: uidSchema, ...common, createTime: timestampSchema, updateTime: timestampSchema })
  .meta({
    description: 'An upstream OIDC identity provider of a group (client secret write-only).',
  });
export type IdentityProviderV2 = z.infer<typeof identityProviderV2Schema>;

/** v1 `IdentityProvider` has `id` and no timestamps. */
export const identityProviderV1Schema = z.object({ id: uidSchema, ...common });
export type IdentityProviderV1 = z.infer<typeof identityProviderV1Schema>;

function oidcWire(i: IdentityProvider) {
  return {
    issuer: i.oidc.issuer,
    clientId: i.oidc.clientId,
    additionalScopes: i.oidc.additionalScopes,
    pkceEnabled: i.oidc.pkceEnabled,
  };
}

export function identityProviderV2(i: IdentityProvider): IdentityProviderV2 {
  return {
    uid: i.uid,
    name: i.name,
    description: i.description,
    defaultRole: i.defaultRole,
    oidc: oidcWire(i),
    createTime: ts(i.createTime),
    updateTime: ts(i.updateTime),
  };
}

export function identityProviderV1(i: IdentityProvider): IdentityProviderV1 {
  return {
    id: i.uid,
    name: i.name,
    description: i.description,
    defaultRole: i.defaultRole,
    oidc: oidcWire(i),
  };
}

/** The kind's descriptor (wire/kinds.ts), read by its REST and gRPC mounts and the presenter. */
export const IDENTITY_PROVIDER_KIND = kind({
  type: IDP_TYPE,
  name: 'IdentityProvider',
  plural: 'identityProviders',
  path: '/iam/v2beta1/identityProviders',
  spec: IDP_LIST,
  wireSchema: identityProviderV2Schema,
  toWire: identityProviderV2,
  outputOnly: IDP_UPDATE.outputOnly,
});
