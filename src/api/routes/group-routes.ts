import type Router from '@koa/router';
import { GROUP_LIST } from '../../resources/groups/group.js';
import type { GroupService } from '../../resources/groups/group-service.js';
import { groupV1, groupV2 } from '../wire/group-wire.js';
import { mountV1, mountV2 } from './crud.js';

export function mountGroupRoutes(router: Router, groups: GroupService, bodyLimit: number): void {
  mountV2(router, groups, {
    path: '/iam/v2beta1/groups',
    plural: 'groups',
    spec: GROUP_LIST,
    toWire: groupV2,
    createWithoutParent: true,
    bodyLimit,
  });
  mountV1(router, groups, {
    path: '/iam/v1/groups',
    spec: GROUP_LIST,
    toWire: groupV1,
    createWithoutParent: true,
    bodyLimit,
  });
}
