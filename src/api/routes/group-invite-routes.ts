import type Router from '@koa/router';
import { GROUP_INVITE_LIST } from '../../resources/group-invites/group-invite.js';
import type { GroupInviteService } from '../../resources/group-invites/group-invite-service.js';
import { principalOf } from '../middleware/authn.js';
import { readJsonObject } from '../middleware/json-body.js';
import { groupInviteV1, groupInviteV2 } from '../wire/group-invite-wire.js';
import { roleBindingV2 } from '../wire/role-binding-wire.js';
import { mountV1, mountV2 } from './crud.js';

/**
 * v1 spells the role `role` and repeats the path's `group` in the body; map to the v2
 * input. Only names change here: the service validates.
 */
function fromV1(body: Record<string, unknown>): Record<string, unknown> {
  const { group: _group, role, ...rest } = body;
  return role === undefined ? rest : { ...rest, roleUid: role };
}

/**
 * `/iam/v2beta1/groupInvites` (Update: role and expiry), `POST /iam/v2beta1/groupInvites:redeem`, and
 * v1's `/iam/v1/group_invites`.
 */
export function mountGroupInviteRoutes(
  router: Router,
  invites: GroupInviteService,
  bodyLimit: number,
): void {
  // Answers the role binding it created. Registered before the collection routes. `:` would start a parameter, hence `\\:`;
  // the collection's `{/*uid}` needs a `/`, so it could not take this path either.
  router.post('/iam/v2beta1/groupInvites\\:redeem', async (ctx) => {
    const body = await readJsonObject(ctx, bodyLimit);
    ctx.body = roleBindingV2(await invites.redeem(principalOf(ctx), body));
  });
  mountV2(router, invites, {
    path: '/iam/v2beta1/groupInvites',
    plural: 'groupInvites',
    spec: GROUP_INVITE_LIST,
    toWire: groupInviteV2,
    bodyLimit,
  });
  mountV1(
    router,
    {
      create: (p, group, body) => invites.create(p, group, fromV1(body)),
      get: invites.get.bind(invites),
      list: invites.list.bind(invites),
      delete: invites.delete.bind(invites),
    },
    { path: '/iam/v1/group_invites', spec: GROUP_INVITE_LIST, toWire: groupInviteV1, bodyLimit },
  );
}
