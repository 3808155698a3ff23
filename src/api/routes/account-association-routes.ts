import {
  accountAssociationCreateSchema,
  accountAssociationPatchSchema,
} from '../../resources/account-associations/account-association-input.js';
import type { AccountAssociationService } from '../../resources/account-associations/account-association-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import {
  ACCOUNT_ASSOCIATION_KIND,
  accountAssociationV1,
  accountAssociationV1Schema,
} from '../../wire/account-association-wire.js';
import { mountV1, mountV2, v2Kind } from './crud.js';

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
    name: ACCOUNT_ASSOCIATION_KIND.name,
    spec: ACCOUNT_ASSOCIATION_KIND.spec,
    createSchema: accountAssociationCreateSchema,
    updateSchema: accountAssociationPatchSchema,
    bodyLimit,
  };
  mountV2(t, aa, {
    ...common,
    ...v2Kind(ACCOUNT_ASSOCIATION_KIND),
    examples: examplesFor(ACCOUNT_ASSOCIATION_KIND.path),
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
