import { groupCreateSchema, groupPatchSchema } from '../../resources/groups/group-input.js';
import type { GroupService } from '../../resources/groups/group-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import { groupV1, groupV1Schema } from '../../wire/group-wire.js';
import { GROUP_KIND } from '../../wire/kinds.js';
import { mountV1, mountV2, v2Kind } from './crud.js';

export function mountGroupRoutes(t: RouteTarget, groups: GroupService, bodyLimit: number): void {
  const common = {
    name: GROUP_KIND.name,
    spec: GROUP_KIND.spec,
    createSchema: groupCreateSchema,
    updateSchema: groupPatchSchema,
    createWithoutParent: true,
    bodyLimit,
  };
  mountV2(t, groups, {
    ...common,
    ...v2Kind(GROUP_KIND),
    examples: examplesFor(GROUP_KIND.path),
  });
  const v1 = '/iam/v1/groups';
  mountV1(t, groups, {
    ...common,
    path: v1,
    wireSchema: groupV1Schema,
    toWire: groupV1,
    examples: examplesFor(v1),
  });
}
