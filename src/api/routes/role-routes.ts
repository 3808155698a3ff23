import { ROLE_LIST } from '../../resources/roles/role.js';
import { roleCreateSchema, rolePatchSchema } from '../../resources/roles/role-input.js';
import type { RoleService } from '../../resources/roles/role-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import { roleV1, roleV1Schema, roleV2, roleV2Schema } from '../../wire/role-wire.js';
import { mountV1, mountV2 } from './crud.js';

/** `/iam/v2beta1/roles` and v1's `/iam/v1/roles`. */
export function mountRoleRoutes(t: RouteTarget, s: RoleService, bodyLimit: number): void {
  const common = {
    name: 'Role',
    spec: ROLE_LIST,
    createSchema: roleCreateSchema,
    updateSchema: rolePatchSchema,
    bodyLimit,
  };
  const path = '/iam/v2beta1/roles';
  mountV2(t, s, {
    ...common,
    path,
    plural: 'roles',
    wireSchema: roleV2Schema,
    toWire: roleV2,
    examples: examplesFor(path),
  });
  const v1 = '/iam/v1/roles';
  mountV1(t, s, {
    ...common,
    path: v1,
    wireSchema: roleV1Schema,
    toWire: roleV1,
    examples: examplesFor(v1),
  });
}
