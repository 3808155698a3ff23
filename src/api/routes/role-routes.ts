import { roleCreateSchema, rolePatchSchema } from '../../resources/roles/role-input.js';
import type { RoleService } from '../../resources/roles/role-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import { ROLE_KIND } from '../../wire/kinds.js';
import { roleV1, roleV1Schema } from '../../wire/role-wire.js';
import { mountV1, mountV2, v2Kind } from './crud.js';

/** `/iam/v2beta1/roles` and v1's `/iam/v1/roles`. */
export function mountRoleRoutes(t: RouteTarget, s: RoleService, bodyLimit: number): void {
  const common = {
    name: ROLE_KIND.name,
    spec: ROLE_KIND.spec,
    createSchema: roleCreateSchema,
    updateSchema: rolePatchSchema,
    bodyLimit,
  };
  mountV2(t, s, {
    ...common,
    ...v2Kind(ROLE_KIND),
    examples: examplesFor(ROLE_KIND.path),
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
