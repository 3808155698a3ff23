import type { GroupService } from './resources/groups/group-service.js';
import type { HealthService } from './resources/health-service.js';
import type { IdentityService } from './resources/identities/identity-service.js';
import type { RoleBindingService } from './resources/role-bindings/role-binding-service.js';
import type { RoleService } from './resources/roles/role-service.js';
import type { TrustedKeyService } from './resources/trusted-keys/trusted-key-service.js';
import type { ManagedResourceService } from './resources/managed/managed-resource-service.js';
import type { AuditService } from './resources/audit/audit-service.js';
import type { AdminService } from './resources/admin/admin-service.js';
import type { AccessService } from './resources/access/access-service.js';
import type { AccessSimulator } from './resources/access/access-simulator.js';
import type { UnusedAccessService } from './resources/usage/unused-access-service.js';
import type { TokenTester } from './resources/sts/token-tester.js';
import type { NameResolver } from './resources/names/name-resolver.js';
// @service-imports

/**
 * The services that are not features, which the doors call by name. Built once, in
 * compose.ts; every feature's service is in `arbor.services` too (src/features.ts).
 */
export interface Services {
  health: HealthService;
  groups: GroupService;
  identities: IdentityService;
  roles: RoleService;
  roleBindings: RoleBindingService;
  trustedKeys: TrustedKeyService;
  managed: ManagedResourceService;
  audit: AuditService;
  admin: AdminService;
  access: AccessService;
  /** `access:simulate`: the access delta of a change set, changing nothing. */
  accessSimulator: AccessSimulator;
  /** Unused-access findings (bindings and identities unused for a window). */
  unusedAccess: UnusedAccessService;
  /** The claim tester (a dry run of the STS exchange). */
  tokenTester: TokenTester;
  /** Names and paths of names to groups, identities and roles. */
  names: NameResolver;
  // @service-types
}
