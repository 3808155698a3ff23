import type Router from '@koa/router';
import type { Services } from '../../services.js';
import { mountGroupRoutes } from './group-routes.js';
import { mountIdentityRoutes } from './identity-routes.js';
import { mountRoleBindingRoutes } from './role-binding-routes.js';
import { mountRoleRoutes } from './role-routes.js';
import { mountAdvisoryRoutes } from './advisory-routes.js';
import { mountRegistryRoutes } from './registry-routes.js';
import { mountAccountAssociationRoutes } from './account-association-routes.js';
import { mountGroupInviteRoutes } from './group-invite-routes.js';
import { mountIdentityProviderRoutes } from './identity-provider-routes.js';
import { mountEventRoutes } from './event-routes.js';
// @route-imports

/** Every authenticated API route, v2beta1 and v1. */
export function mountApiRoutes(router: Router, s: Services, bodyLimit: number): void {
  mountGroupRoutes(router, s.groups, bodyLimit);
  mountIdentityRoutes(router, s.identities, bodyLimit);
  mountRoleRoutes(router, s.roles, bodyLimit);
  mountRoleBindingRoutes(router, s.roleBindings, bodyLimit);
  mountRegistryRoutes(router, s.repos, s.tags, bodyLimit);
  mountAdvisoryRoutes(router, s.advisories, bodyLimit);
  mountIdentityProviderRoutes(router, s.identityProviders, bodyLimit);
  mountAccountAssociationRoutes(router, s.accountAssociations, bodyLimit);
  mountGroupInviteRoutes(router, s.groupInvites, bodyLimit);
  mountEventRoutes(router, s.audit, s.subscriptions, bodyLimit);
  // @routes
}
