import type Router from '@koa/router';
import type { HealthService } from '../../resources/health-service.js';

/** Liveness says the process serves; readiness says the database answers too. */
export function mountHealthRoutes(router: Router, health: HealthService): void {
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    await health.ready();
    ctx.body = { status: 'ok' };
  });
}
