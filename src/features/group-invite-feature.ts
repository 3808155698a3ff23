import { mountGroupInviteRoutes } from '../api/routes/group-invite-routes.js';
import { KnexGroupInviteStore } from '../db/stores/group-invite-store.js';
import { GroupInvitesService } from '../gen/arbor/iam/v2beta1/group_invites_pb.js';
import { mountGroupInviteRpcs } from '../grpc/group-invite-rpcs.js';
import { GroupInviteService } from '../resources/group-invites/group-invite-service.js';
import { GROUP_INVITE_KIND } from '../wire/group-invite-wire.js';
import { defineFeature } from './feature.js';

/** Group invites: a code that, redeemed, binds its holder to a role on the group. */
export const groupInviteFeature = defineFeature({
  key: 'groupInvites',
  kinds: [GROUP_INVITE_KIND],
  grpcServices: [GroupInvitesService],
  create: (d) => {
    const service = new GroupInviteService({
      ...d.common,
      groups: d.stores.groups,
      roles: d.stores.roles,
      invites: new KnexGroupInviteStore(),
      bindings: d.stores.roleBindings,
    });
    return {
      service,
      rest: (t, bodyLimit) => mountGroupInviteRoutes(t, service, bodyLimit),
      grpc: (router, auth) => mountGroupInviteRpcs(router, auth, service),
    };
  },
});
