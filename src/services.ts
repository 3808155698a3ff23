import type { GroupService } from './resources/groups/group-service.js';
import type { HealthService } from './resources/health-service.js';
// @service-imports

/** Everything the front doors may call. Built once, in compose.ts. */
export interface Services {
  health: HealthService;
  groups: GroupService;
  // @service-types
}
