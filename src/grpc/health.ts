import { Code, ConnectError, type ConnectRouter, type HandlerContext } from '@connectrpc/connect';
import { notFound } from '../core/rpc-error.js';
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
  type HealthCheckRequest,
} from '../gen/grpc/health/v1/health_pb.js';
import type { HealthService } from '../resources/health-service.js';
import { SharedReadiness } from './shared-readiness.js';

/** `liveness` answers like /healthz: the process serves, whatever its database does. */
export const LIVENESS = 'liveness';

/** How often Watch re-checks readiness (once for all its streams). */
const WATCH_INTERVAL_MS = 5_000;

export interface HealthOptions {
  /** Watch streams open at once; the next one is RESOURCE_EXHAUSTED. */
  maxWatches: number;
  intervalMs?: number;
}

/**
 * grpc.health.v1 for Kubernetes gRPC probes and grpc-health-probe, public like /readyz.
 * The empty service name, `readiness` and every API service name answer like /readyz
 * (SERVING while the database answers); `liveness` like /healthz. Any other name is
 * NOT_FOUND, as the protocol asks.
 *
 * Watch is public and long-lived, so it is bounded: at most `maxWatches` streams at once,
 * all fed by one readiness check every 5 s ({@link SharedReadiness}), not one per stream.
 */
export function mountHealth(
  router: ConnectRouter,
  health: HealthService,
  serviceNames: readonly string[],
  opts: HealthOptions,
): void {
  const known = new Set(['', 'readiness', LIVENESS, ...serviceNames]);
  const readiness = new SharedReadiness<Status>(async () => {
    try {
      await health.ready();
      return Status.SERVING;
    } catch {
      return Status.NOT_SERVING;
    }
  }, opts.intervalMs ?? WATCH_INTERVAL_MS);
  let watching = 0;
  const check = (req: HealthCheckRequest) => {
    if (!known.has(req.service)) throw notFound('grpc.health.v1/Service', req.service);
  };
  router.service(Health, {
    check: async (req) => {
      check(req);
      if (req.service === LIVENESS) return { status: Status.SERVING };
      return { status: await readiness.check() };
    },
    async *watch(req: HealthCheckRequest, ctx: HandlerContext) {
      check(req);
      if (watching >= opts.maxWatches)
        throw new ConnectError(
          `too many health watches: at most ${opts.maxWatches} at once`,
          Code.ResourceExhausted,
        );
      watching++;
      try {
        if (req.service === LIVENESS) {
          yield { status: Status.SERVING };
          await aborted(ctx.signal);
          return;
        }
        for await (const status of readiness.changes(ctx.signal)) yield { status };
      } finally {
        watching--;
      }
    },
  });
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
