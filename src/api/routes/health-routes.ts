import { z } from 'zod';
import type { HealthService } from '../../resources/health-service.js';
import { mountOperation, type RouteTarget } from '../openapi/contract.js';

const healthSchema = z.object({
  status: z.literal('ok'),
  /** Only while migrations run (the listener answers before the app serves). */
  phase: z.literal('starting').optional(),
});
const health = { name: 'Health', schema: healthSchema, io: 'output' } as const;

/** Liveness says the process serves; readiness says the database answers too. */
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
