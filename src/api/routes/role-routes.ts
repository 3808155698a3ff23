import type Router from '@koa/router';
import { ROLE_LIST } from '../../resources/roles/role.js';
import type { RoleService } from '../../resources/roles/role-service.js';
import { roleV1, roleV2 } from '../wire/role-wire.js';
import { mountV1, mountV2 } from './crud.js';

/** `/iam/v2beta1/roles` and v1's `/iam/v1/roles`. */
export function mountRoleRoutes(router: Router, s: RoleService, bodyLimit: number): void {
  mountV2(router, s, {
    path: '/iam/v2beta1/roles',
    plural: 'roles',
    spec: ROLE_LIST,
    toWire: roleV2,
    bodyLimit,
  });
  mountV1(router, s, { path: '/iam/v1/roles', spec: ROLE_LIST, toWire: roleV1, bodyLimit });
}
