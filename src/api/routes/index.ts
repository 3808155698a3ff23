import type Router from '@koa/router';
import type { Services } from '../../services.js';
import { mountGroupRoutes } from './group-routes.js';
// @route-imports

/** Every authenticated API route, v2beta1 and v1. */
export function mountApiRoutes(router: Router, s: Services, bodyLimit: number): void {
  mountGroupRoutes(router, s.groups, bodyLimit);
  // @routes
}
