import { z } from 'zod';
import type { Identity } from '../resources/identities/identity.js';
import { timestampSchema, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

const claimMatchSchema = z
  .object({
    issuer: z.string().optional(),
    issuerPattern: z.string().optional(),
    subject: z.string().optional(),
    subjectPattern: z.string().optional(),
    audience: z.string().optional(),
    claims: z.record(z.string(), z.string()).optional(),
  })
  .meta({ description: 'Which OIDC tokens may assume the identity.' });

const staticKeysSchema = z.object({
  issuer: z.string(),
  subject: z.string(),
  issuerKeys: z.string().meta({ description: 'A JWKS document as a JSON string.' }),
  expirationTime: timestampSchema,
});

/** The relationship members, shared by v2 and v1 (proto3 JSON is camelCase in both). */
const relationshipShape = {
  claimMatch: claimMatchSchema.optional(),
  staticKeys: staticKeysSchema.optional(),
};

export const identityV2Schema = z
  .object({
    uid: uidSchema,
    name: z.string(),
    description: z.string(),
    ...relationshipShape,
    lastSeenTime: timestampSchema,
    createTime: timestampSchema,
    updateTime: timestampSchema,
  })
  .meta({ description: 'An identity that workloads assume: one of claimMatch or staticKeys.' });
export type IdentityV2 = z.infer<typeof identityV2Schema>;

export const identityV1Schema = z.object({
  id: uidSchema,
  name: z.string(),
  description: z.string(),
  ...relationshipShape,
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
});
export type IdentityV1 = z.infer<typeof identityV1Schema>;

function relationship(i: Identity) {
  return {
    ...(i.claimMatch ? { claimMatch: i.claimMatch } : {}),
    ...(i.staticKeys
      ? { staticKeys: { ...i.staticKeys, expirationTime: ts(i.staticKeys.expirationTime) } }
      : {}),
  };
}

export function identityV2(i: Identity): IdentityV2 {
  return {
    uid: i.uid,
    name: i.name,
    description: i.description,
    ...relationship(i),
    lastSeenTime: ts(i.lastSeenTime),
    createTime: ts(i.createTime),
    updateTime: ts(i.updateTime),
  };
}

export function identityV1(i: Identity): IdentityV1 {
  return {
    id: i.uid,
    name: i.name,
    description: i.description,
    ...relationship(i),
    createdAt: ts(i.createTime),
    updatedAt: ts(i.updateTime),
  };
}
