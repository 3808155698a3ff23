import type { Authenticator } from '../auth/authenticator.js';
import {
  GroupInvitesService,
  RedeemGroupInviteRequestSchema,
} from '../gen/arbor/iam/v2beta1/group_invites_pb.js';
import type { GroupInviteService } from '../resources/group-invites/group-invite-service.js';
import { GROUP_INVITE_KIND } from '../wire/group-invite-wire.js';
import { roleBindingV2 } from '../wire/role-binding-wire.js';
import { principalOf } from './authn.js';
import { bodyOf, mountCrud } from './crud.js';
import type { GrpcRouter } from './json-rpc.js';

/** GroupInvitesService: every kind's CRUD, and Redeem as REST's `:redeem` (a role binding). */
export function mountGroupInviteRpcs(
  router: GrpcRouter,
  auth: Authenticator,
  s: GroupInviteService,
): void {
  mountCrud(router, auth, GroupInvitesService, s, GROUP_INVITE_KIND);
  router.jsonRpc(GroupInvitesService.method.redeemGroupInvite, async (req, ctx) => {
    const p = await principalOf(auth, ctx);
    const binding = await s.redeem(p, bodyOf(RedeemGroupInviteRequestSchema, req));
    return roleBindingV2(binding);
  });
}
