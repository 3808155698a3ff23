import { z } from 'zod';
import type { HealthService } from '../../resources/health-service.js';
import { mountOperation, type RouteTarget } from '../openapi/contract.js';

const healthSchema = z.object({
  status: z.literal('ok'),
  /** Only while migrations run (the listener answers before the app serves). */
  phase: z.literal('starting').optional(),
});
const health = { name: 'Health', schema: healthSchema, io: 'output' } as const;

/**
 * Liveness says the process serves; startup that migrations are done; readiness that the
 * database answers too.
 */
export function mountHealthRoutes(t: RouteTarget, h: HealthService): void {
  const probe = { method: 'get', tags: ['Health'], access: 'public' } as const;
  mountOperation(
    t,
    {
      ...probe,
      path: '/healthz',
      operationId: 'health.live',
      summary: 'Liveness: the process serves',
      response: { status: 200, description: 'Alive.', schema: health },
      errors: [],
    },
    (ctx) => {
      ctx.body = { status: 'ok' };
    },
  );
  // The listener (api/lifecycle.ts) answers this itself, 503 until migrations are done;
  // whatever reaches the app is started, so the app's own answer is the same.
  mountOperation(
    t,
    {
      ...probe,
      path: '/startupz',
      operationId: 'health.started',
      summary: 'Startup: migrations are applied and the API serves',
      description: '503 while the database is being migrated.',
      response: { status: 200, description: 'Started.', schema: health },
      errors: [503],
    },
    (ctx) => {
      ctx.body = { status: 'ok' };
    },
  );
  mountOperation(
    t,
    {
      ...probe,
      path: '/readyz',
      operationId: 'health.ready',
      summary: 'Readiness: the database answers too',
      description: 'Also 503 from SIGTERM on, while the server drains.',
      response: { status: 200, description: 'Ready.', schema: health },
      errors: [503],
    },
    async (ctx) => {
      await h.ready();
      ctx.body = { status: 'ok' };
    },
  );
}
