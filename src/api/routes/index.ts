import type { Services } from '../../services.js';
import type { RouteTarget } from '../openapi/contract.js';
import { mountGroupRoutes } from './group-routes.js';
import { mountIdentityRoutes } from './identity-routes.js';
import { mountRoleBindingRoutes } from './role-binding-routes.js';
import { mountRoleRoutes } from './role-routes.js';
import { mountEventRoutes } from './event-routes.js';
import { mountAdminRoutes } from './admin-routes.js';
import { mountAccessRoutes } from './access-routes.js';
import { mountNameRoutes } from './name-routes.js';
import { mountSimulateRoute } from './simulate-route.js';
import { mountConditionRoutes } from './condition-routes.js';
// @route-imports

/** Every authenticated API route of the core, v2beta1 and v1 (features mount their own). */
export function mountApiRoutes(t: RouteTarget, s: Services, bodyLimit: number): void {
  mountGroupRoutes(t, s.groups, bodyLimit);
  mountIdentityRoutes(t, s.identities, bodyLimit);
  mountRoleRoutes(t, s.roles, bodyLimit);
  mountRoleBindingRoutes(t, s.roleBindings, bodyLimit);
  mountEventRoutes(t, s.audit, bodyLimit);
  mountAdminRoutes(t, s.admin);
  mountAccessRoutes(t, s.access, s.tokenTester, bodyLimit, s.unusedAccess);
  mountNameRoutes(t, s.names);
  mountSimulateRoute(t, s.accessSimulator, bodyLimit);
  mountConditionRoutes(t, bodyLimit);
  // @routes
}
