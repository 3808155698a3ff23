import type Router from '@koa/router';
import { ROLE_BINDING_LIST } from '../../resources/role-bindings/role-binding.js';
import type { RoleBindingService } from '../../resources/role-bindings/role-binding-service.js';
import { roleBindingV1, roleBindingV2 } from '../wire/role-binding-wire.js';
import { mountV1, mountV2 } from './crud.js';

/** v1 names the references `identity` and `role`; the service speaks v2's names. */
function fromV1(body: Record<string, unknown>): Record<string, unknown> {
  const {
    identity,
    role,
    group: _group,
    claimMatchIssuer: _i,
    claimMatchSubject: _s,
    ...rest
  } = body;
  return {
    ...rest,
    ...(identity === undefined ? {} : { identityUid: identity }),
    ...(role === undefined ? {} : { roleUid: role }),
  };
}

/** `/iam/v2beta1/roleBindings` and v1's lower-case `/iam/v1/rolebindings`. */
export function mountRoleBindingRoutes(
  router: Router,
  s: RoleBindingService,
  bodyLimit: number,
): void {
  mountV2(router, s, {
    path: '/iam/v2beta1/roleBindings',
    plural: 'roleBindings',
    spec: ROLE_BINDING_LIST,
    toWire: roleBindingV2,
    bodyLimit,
  });
  mountV1(
    router,
    {
      create: (p, parent, body) => s.create(p, parent, fromV1(body)),
      get: s.get.bind(s),
      list: s.list.bind(s),
      update: (p, uid, body, mask) => s.update(p, uid, fromV1(body), mask),
      delete: s.delete.bind(s),
    },
    { path: '/iam/v1/rolebindings', spec: ROLE_BINDING_LIST, toWire: roleBindingV1, bodyLimit },
  );
}
