import { GROUP_LIST } from '../../resources/groups/group.js';
import { groupCreateSchema, groupPatchSchema } from '../../resources/groups/group-input.js';
import type { GroupService } from '../../resources/groups/group-service.js';
import type { RouteTarget } from '../openapi/contract.js';
import { examplesFor } from '../openapi/examples.js';
import { groupV1, groupV1Schema, groupV2, groupV2Schema } from '../../wire/group-wire.js';
import { mountV1, mountV2 } from './crud.js';

export function mountGroupRoutes(t: RouteTarget, groups: GroupService, bodyLimit: number): void {
  const common = {
    name: 'Group',
    spec: GROUP_LIST,
    createSchema: groupCreateSchema,
    updateSchema: groupPatchSchema,
    createWithoutParent: true,
    bodyLimit,
  };
  const path = '/iam/v2beta1/groups';
  mountV2(t, groups, {
    ...common,
    path,
    plural: 'groups',
    wireSchema: groupV2Schema,
    toWire: groupV2,
    examples: examplesFor(path),
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
