import type { Presented } from '../resources/audit/audit-event.js';
import { ACCESS_REQUEST_TYPE } from '../resources/access-requests/access-request.js';
import { ACCOUNT_ASSOCIATION_TYPE } from '../resources/account-associations/account-association.js';
import { ADVISORY_TYPE } from '../resources/advisories/advisory.js';
import { GROUP_INVITE_TYPE } from '../resources/group-invites/group-invite.js';
import { GROUP_TYPE } from '../resources/groups/group.js';
import { IDENTITY_TYPE } from '../resources/identities/identity.js';
import { IDP_TYPE } from '../resources/identity-providers/identity-provider.js';
import { REPO_TYPE } from '../resources/repos/repo.js';
import { ROLE_BINDING_TYPE } from '../resources/role-bindings/role-binding.js';
import { ROLE_TYPE } from '../resources/roles/role.js';
import { SUBSCRIPTION_TYPE } from '../resources/subscriptions/subscription.js';
import { TAG_TYPE } from '../resources/tags/tag.js';
import { accessRequestV2 } from './access-request-wire.js';
import { accountAssociationV2 } from './account-association-wire.js';
import { advisoryV2 } from './advisory-wire.js';
import { groupInviteV2 } from './group-invite-wire.js';
import { groupV2 } from './group-wire.js';
import { identityProviderV2 } from './identity-provider-wire.js';
import { identityV2 } from './identity-wire.js';
import { repoV2, tagV2 } from './registry-wire.js';
import { roleBindingV2 } from './role-binding-wire.js';
import { roleV2 } from './role-wire.js';
import { subscriptionV2 } from './subscription-wire.js';

// Each wire function takes its own domain type; the audit log hands them what the
// service of that very type recorded.
type AnyWire = (x: never) => unknown;

const V2: Readonly<Record<string, AnyWire>> = {
  [GROUP_TYPE]: groupV2,
  [IDENTITY_TYPE]: identityV2,
  [ROLE_TYPE]: roleV2,
  [ROLE_BINDING_TYPE]: roleBindingV2,
  [REPO_TYPE]: repoV2,
  [TAG_TYPE]: tagV2,
  [ADVISORY_TYPE]: advisoryV2,
  [IDP_TYPE]: identityProviderV2,
  [ACCOUNT_ASSOCIATION_TYPE]: accountAssociationV2,
  [GROUP_INVITE_TYPE]: groupInviteV2,
  [SUBSCRIPTION_TYPE]: subscriptionV2,
  [ACCESS_REQUEST_TYPE]: accessRequestV2,
};

/**
 * A resource as the v2 API shows it: what audit records hold and CloudEvents carry. The
 * wire forms leave write-only secrets out (client secrets, invite codes after creation).
 * A type without a wire form is recorded as its JSON (a new kind should add itself here).
 */
export function presentResource(type: string, resource: unknown): Presented {
  const wire = V2[type] as ((x: unknown) => unknown) | undefined;
  const shown = wire ? wire(resource) : resource;
  return JSON.parse(JSON.stringify(shown)) as Presented;
}
