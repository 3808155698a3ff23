import type Router from '@koa/router';
import { ACCOUNT_ASSOCIATION_LIST } from '../../resources/account-associations/account-association.js';
import type { AccountAssociationService } from '../../resources/account-associations/account-association-service.js';
import { accountAssociationV1, accountAssociationV2 } from '../wire/account-association-wire.js';
import { mountV1, mountV2 } from './crud.js';

/** v1 bodies repeat the path's `group`; like other output names it is never taken from input. */
function withoutGroup(body: Record<string, unknown>): Record<string, unknown> {
  const { group: _group, ...rest } = body;
  return rest;
}

/** `/iam/v2beta1/accountAssociations` and v1's `/iam/v1/account_associations` (PUT replaces). */
export function mountAccountAssociationRoutes(
  router: Router,
  aa: AccountAssociationService,
  bodyLimit: number,
): void {
  mountV2(router, aa, {
    path: '/iam/v2beta1/accountAssociations',
    plural: 'accountAssociations',
    spec: ACCOUNT_ASSOCIATION_LIST,
    toWire: accountAssociationV2,
    bodyLimit,
  });
  mountV1(
    router,
    {
      create: (p, group, body) => aa.create(p, group, withoutGroup(body)),
      get: aa.get.bind(aa),
      list: aa.list.bind(aa),
      update: (p, group, body, mask) => aa.update(p, group, withoutGroup(body), mask),
      delete: aa.delete.bind(aa),
    },
    {
      path: '/iam/v1/account_associations',
      spec: ACCOUNT_ASSOCIATION_LIST,
      toWire: accountAssociationV1,
      bodyLimit,
    },
  );
}
