import { ACCOUNT_ASSOCIATION_LIST } from '../../resources/account-associations/account-association.js';
import {
  accountAssociationCreateSchema,
  accountAssociationPatchSchema,
} from '../../resources/account-associations/account-association-input.js';
import type { AccountAssociationService } from '../../resources/account-associations/account-association-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import {
  accountAssociationV1,
  accountAssociationV1Schema,
  accountAssociationV2,
  accountAssociationV2Schema,
} from '../../wire/account-association-wire.js';
import { mountV1, mountV2 } from './crud.js';

/** v1 bodies repeat the path's `group`; like other output names it is never taken from input. */
function withoutGroup(body: Record<string, unknown>): Record<string, unknown> {
  const { group: _group, ...rest } = body;
  return rest;
}

/** `/iam/v2beta1/accountAssociations` and v1's `/iam/v1/account_associations` (PUT replaces). */
export function mountAccountAssociationRoutes(
  t: RouteTarget,
  aa: AccountAssociationService,
  bodyLimit: number,
): void {
  const common = {
    name: 'AccountAssociation',
    spec: ACCOUNT_ASSOCIATION_LIST,
    createSchema: accountAssociationCreateSchema,
    updateSchema: accountAssociationPatchSchema,
    bodyLimit,
  };
  const path = '/iam/v2beta1/accountAssociations';
  mountV2(t, aa, {
    ...common,
    path,
    plural: 'accountAssociations',
    wireSchema: accountAssociationV2Schema,
    toWire: accountAssociationV2,
    examples: examplesFor(path),
  });
  const v1 = '/iam/v1/account_associations';
  mountV1(
    t,
    {
      create: (p, group, body) => aa.create(p, group, withoutGroup(body)),
      get: aa.get.bind(aa),
      list: aa.list.bind(aa),
      update: (p, group, body, mask) => aa.update(p, group, withoutGroup(body), mask),
      delete: aa.delete.bind(aa),
    },
    {
      ...common,
      path: v1,
      wireSchema: accountAssociationV1Schema,
      toWire: accountAssociationV1,
      examples: examplesFor(v1),
    },
  );
}
