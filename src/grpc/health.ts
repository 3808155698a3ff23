import type { ConnectRouter, HandlerContext } from '@connectrpc/connect';
import { notFound } from '../core/rpc-error.js';
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
  type HealthCheckRequest,
} from '../gen/grpc/health/v1/health_pb.js';
import type { HealthService } from '../resources/health-service.js';

/** `liveness` answers like /healthz: the process serves, whatever its database does. */
export const LIVENESS = 'liveness';

/** How often Watch re-checks readiness. */
const WATCH_INTERVAL_MS = 5_000;

/**
 * grpc.health.v1 for Kubernetes gRPC probes and grpc-health-probe, public like /readyz.
 * The empty service name, `readiness` and every API service name answer like /readyz
 * (SERVING while the database answers); `liveness` like /healthz. Any other name is
 * NOT_FOUND, as the protocol asks.
 */
export function mountHealth(
  router: ConnectRouter,
  health: HealthService,
  serviceNames: readonly string[],
): void {
  const known = new Set(['', 'readiness', LIVENESS, ...serviceNames]);
  const status = async (req: HealthCheckRequest): Promise<Status> => {
    if (!known.has(req.service)) throw notFound('grpc.health.v1/Service', req.service);
    if (req.service === LIVENESS) return Status.SERVING;
    try {
      await health.ready();
      return Status.SERVING;
    } catch {
      return Status.NOT_SERVING;
    }
  };
  router.service(Health, {
    check: async (req) => ({ status: await status(req) }),
    async *watch(req: HealthCheckRequest, ctx: HandlerContext) {
      let last: Status | undefined;
      while (!ctx.signal.aborted) {
        const now = await status(req);
        if (now !== last) yield { status: now };
        last = now;
        await sleep(WATCH_INTERVAL_MS, ctx.signal);
      }
    },
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
