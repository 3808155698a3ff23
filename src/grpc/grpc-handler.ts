import { connectNodeAdapter } from '@connectrpc/connect-node';

/** A Node request handler for HTTP/1.1 and HTTP/2 requests alike. */
export type NodeHandlerFn = ReturnType<typeof connectNodeAdapter>;
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.js';
import type { SecurityTokenService } from '../auth/sts.js';
import { Health } from '../gen/grpc/health/v1/health_pb.js';
import type { Services } from '../services.js';
import { errorsAndLogging } from './errors.js';
import { mountHealth } from './health.js';
import { mountReflection } from './reflection.js';
import { API_SERVICES, mountGrpcServices } from './routes.js';
import { UnaryFastPath, type FastPathStats } from './unary-fast-path.js';

export interface GrpcDeps {
  services: Services;
  authenticator: Authenticator;
  sts: SecurityTokenService;
  logger: Logger;
  /** Largest request message accepted, in bytes (the REST body limit). */
  readMaxBytes: number;
}

/**
 * The gRPC front door as one Node request handler: gRPC (HTTP/2), gRPC-Web and the Connect
 * protocol for every API service, health and reflection. A request for any other path
 * goes to `fallback`, the REST door, so both share one port.
 */
export function createGrpcHandler(
  d: GrpcDeps,
  fallback: NodeHandlerFn,
): NodeHandlerFn & { fastPath: FastPathStats } {
  const logger = d.logger.child({ door: 'grpc' });
  // Plain gRPC unary calls of the API services skip Connect's pipeline (unary-fast-path.ts);
  // it serves the impls mounted here, recorded as Connect's router takes them.
  const fast = new UnaryFastPath(logger, d.readMaxBytes);
  const connect = connectNodeAdapter({
    grpc: true,
    grpcWeb: true,
    connect: true,
    readMaxBytes: d.readMaxBytes,
    interceptors: [errorsAndLogging(logger)],
    routes: (router) => {
      mountGrpcServices(fast.recording(router), d);
      const names = API_SERVICES.map((s) => s.typeName);
      mountHealth(router, d.services.health, names);
      mountReflection(router, [...API_SERVICES, Health]);
    },
    fallback,
  });
  const handler: NodeHandlerFn = (req, res) => {
    if (!fast.tryServe(req, res)) connect(req, res);
  };
  return Object.assign(handler, { fastPath: fast.stats });
}
