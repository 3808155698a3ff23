import { z } from 'zod';
import {
  roleBindingCreateSchema,
  roleBindingPatchSchema,
} from '../../resources/role-bindings/role-binding-input.js';
import type { RoleBindingService } from '../../resources/role-bindings/role-binding-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import { ROLE_BINDING_KIND } from '../../wire/kinds.js';
import { roleBindingV1, roleBindingV1Schema } from '../../wire/role-binding-wire.js';
import { mountV1, mountV2, v2Kind } from './crud.js';

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

/** The v1 body as fromV1 reads it: v2's fields under their v1 names. */
const { identityUid, roleUid } = roleBindingCreateSchema.shape;
const v1BodySchema = z.strictObject({ identity: identityUid, role: roleUid });

/** `/iam/v2beta1/roleBindings` and v1's lower-case `/iam/v1/rolebindings`. */
export function mountRoleBindingRoutes(
  t: RouteTarget,
  s: RoleBindingService,
  bodyLimit: number,
): void {
  mountV2(t, s, {
    ...v2Kind(ROLE_BINDING_KIND),
    createSchema: roleBindingCreateSchema,
    updateSchema: roleBindingPatchSchema,
    examples: examplesFor(ROLE_BINDING_KIND.path),
    bodyLimit,
  });
  const v1 = '/iam/v1/rolebindings';
  mountV1(
    t,
    {
      create: (p, parent, body) => s.create(p, parent, fromV1(body)),
      get: s.get.bind(s),
      list: s.list.bind(s),
      update: (p, uid, body, mask) => s.update(p, uid, fromV1(body), mask),
      delete: s.delete.bind(s),
    },
    {
      path: v1,
      name: ROLE_BINDING_KIND.name,
      spec: ROLE_BINDING_KIND.spec,
      wireSchema: roleBindingV1Schema,
      toWire: roleBindingV1,
      createSchema: v1BodySchema,
      updateSchema: v1BodySchema,
      examples: examplesFor(v1),
      bodyLimit,
    },
  );
}
