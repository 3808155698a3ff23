import type { JsonValue } from '@bufbuild/protobuf';
import type { Authenticator } from '../auth/authenticator.js';
import { GroupsService } from '../gen/arbor/iam/v2beta1/groups_pb.js';
import { IdentitiesService } from '../gen/arbor/iam/v2beta1/identities_pb.js';
import { RolesService } from '../gen/arbor/iam/v2beta1/roles_pb.js';
import type { NameResolver } from '../resources/names/name-resolver.js';
import { groupV2 } from '../wire/group-wire.js';
import { identityV2 } from '../wire/identity-wire.js';
import { roleV2 } from '../wire/role-wire.js';
import { principalOf } from './authn.js';
import type { GrpcRouter } from './json-rpc.js';

/** proto3 has no absent string: an empty one is a parameter not given. */
const given = (v: unknown): string | undefined =>
  typeof v === 'string' && v !== '' ? v : undefined;

/** ResolveGroup, ResolveIdentity and ResolveRole: the REST door's `:resolve` answers. */
export function mountNameRpcs(router: GrpcRouter, auth: Authenticator, names: NameResolver): void {
  router.jsonRpc(
    GroupsService.method.resolveGroup,
    async (req, ctx) =>
      groupV2(await names.group(await principalOf(auth, ctx), given(req.path))) as JsonValue,
  );
  router.jsonRpc(
    IdentitiesService.method.resolveIdentity,
    async (req, ctx) =>
      identityV2(await names.identity(await principalOf(auth, ctx), given(req.path))) as JsonValue,
  );
  router.jsonRpc(
    RolesService.method.resolveRole,
    async (req, ctx) =>
      roleV2(
        await names.role(await principalOf(auth, ctx), given(req.name), given(req.group)),
      ) as JsonValue,
  );
}
