import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { connectNodeAdapter } from '@connectrpc/connect-node';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.js';
import type { SecurityTokenService } from '../resources/sts/security-token-service.js';
import { Health } from '../gen/grpc/health/v1/health_pb.js';
import type { Services } from '../services.js';
import { authenticateCall } from './authn.js';
import { errorsAndLogging } from './errors.js';
import { mountHealth } from './health.js';
import { mountReflection } from './reflection.js';
import { rpcNodeAdapter } from './rpc-adapter.js';
import {
  API_SERVICES,
  authenticatedServices,
  mountGrpcServices,
  type GrpcFeatures,
  type GrpcRouteDeps,
} from './routes.js';
import { UnaryFastPath, type CallGate, type FastPathStats } from './unary-fast-path.js';

/** A Node request handler for HTTP/1.1 and HTTP/2 requests alike. */
export type NodeHandlerFn = ReturnType<typeof connectNodeAdapter>;

/**
 * Offered each HTTP/2 stream before Node makes its compat request and response: true when
 * it took the stream and answers it itself, false to leave it untouched for the handler.
 */
export type StreamTaker = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => boolean;

/** The gRPC door: the request handler, and the raw stream path for plain unary calls. */
export interface GrpcHandler extends NodeHandlerFn {
  tryStream: StreamTaker;
  fastPath: FastPathStats;
}

export interface GrpcDeps {
  services: Services;
  authenticator: Authenticator;
  sts: SecurityTokenService;
  /** The OAuth doors over gRPC (TokenService). */
  oauth?: GrpcRouteDeps['oauth'];
  /** The features' gRPC services and methods (src/features.ts). */
  features: GrpcFeatures;
  logger: Logger;
  /** Largest request message accepted, in bytes (the REST body limit). */
  readMaxBytes: number;
  /** grpc.health.v1 Watch streams open at once. */
  healthWatchMax: number;
}

/**
 * The gRPC front door as one Node request handler: gRPC (HTTP/2), gRPC-Web and the Connect
 * protocol for every API service, health and reflection. A request for any other path
 * goes to `fallback`, the REST door, so both share one port. Its `tryStream`, offered the
 * HTTP/2 streams first (ArborListener), serves plain unary calls without Connect.
 */
export function createGrpcHandler(d: GrpcDeps, fallback: NodeHandlerFn): GrpcHandler {
  const logger = d.logger.child({ door: 'grpc' });
  // Plain gRPC unary calls of the API services skip Connect's pipeline (unary-fast-path.ts);
  // it serves the impls mounted here, recorded as Connect's router takes them. A server
  // that does not offer its streams still gets every call answered, by Connect.
  const all = [...API_SERVICES, ...d.features.grpcServices];
  const callGate = gate(d.authenticator, authenticatedServices(all));
  const fast = new UnaryFastPath(logger, d.readMaxBytes, callGate);
  const connect = rpcNodeAdapter({
    grpc: true,
    grpcWeb: true,
    connect: true,
    gate: callGate,
    logger,
    readMaxBytes: d.readMaxBytes,
    interceptors: [errorsAndLogging(logger)],
    routes: (router) => {
      mountGrpcServices(fast.recording(router), d);
      const names = all.map((s) => s.typeName);
      mountHealth(router, d.services.health, names, { maxWatches: d.healthWatchMax });
      mountReflection(router, [...all, Health]);
    },
    fallback,
  });
  return Object.assign(connect, {
    tryStream: fast.tryStream.bind(fast),
    fastPath: fast.stats,
  });
}

/** Every method of the services that need a principal is authenticated before its body. */
function gate(authenticator: Authenticator, authenticated: ReadonlySet<string>): CallGate {
  return {
    needsPrincipal: (method) => authenticated.has(method.parent.typeName),
    authenticate: (h, session) =>
      authenticateCall(authenticator, first(h.authorization), h['x-request-id'], session),
  };
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
