import { z } from 'zod';
import {
  ACCOUNT_ASSOCIATION_LIST,
  ACCOUNT_ASSOCIATION_TYPE,
  ACCOUNT_ASSOCIATION_UPDATE,
  type AccountAssociation,
} from '../resources/account-associations/account-association.js';
import { kind } from './kinds.js';
import { timestampSchema, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

/** The clouds that are associated; an unset one is omitted, as proto3 JSON omits a message. */
const cloudsShape = {
  amazon: z.object({ account: z.string() }).optional(),
  google: z
    .object({ projectId: z.string().optional(), projectNumber: z.string().optional() })
    .optional(),
  azure: z.object({ tenantId: z.string(), clientIds: z.record(z.string(), z.string()) }).optional(),
};

export const accountAssociationV2Schema = z
  .object({
    uid: uidSchema.meta({ description: "The group's uid: one association per group." }),
    name: z.string(),
    description: z.string(),
    ...cloudsShape,
    createTime: timestampSchema,
    updateTime: timestampSchema,
  })
  .meta({ description: 'The cloud accounts associated with one group.' });
export type AccountAssociationV2 = z.infer<typeof accountAssociationV2Schema>;

/** v1 `AccountAssociations` names the group `group` and has no timestamps. */
export const accountAssociationV1Schema = z.object({
  group: uidSchema,
  name: z.string(),
  description: z.string(),
  ...cloudsShape,
});
export type AccountAssociationV1 = z.infer<typeof accountAssociationV1Schema>;

function clouds(a: AccountAssociation) {
  return {
    ...(a.amazon ? { amazon: a.amazon } : {}),
    ...(a.google ? { google: a.google } : {}),
    ...(a.azure ? { azure: a.azure } : {}),
  };
}

/** v2: the uid is the group's uid. */
export function accountAssociationV2(a: AccountAssociation): AccountAssociationV2 {
  return {
    uid: a.uid,
    name: a.name,
    description: a.description,
    ...clouds(a),
    createTime: ts(a.createTime),
    updateTime: ts(a.updateTime),
  };
}

export function accountAssociationV1(a: AccountAssociation): AccountAssociationV1 {
  return { group: a.uid, name: a.name, description: a.description, ...clouds(a) };
}

/** The kind's descriptor (wire/kinds.ts), read by its REST and gRPC mounts and the presenter. */
export const ACCOUNT_ASSOCIATION_KIND = kind({
  type: ACCOUNT_ASSOCIATION_TYPE,
  name: 'AccountAssociation',
  plural: 'accountAssociations',
  path: '/iam/v2beta1/accountAssociations',
  spec: ACCOUNT_ASSOCIATION_LIST,
  wireSchema: accountAssociationV2Schema,
  toWire: accountAssociationV2,
  outputOnly: ACCOUNT_ASSOCIATION_UPDATE.outputOnly,
});
