import cors from '@koa/cors';
import Router from '@koa/router';
import Koa from 'koa';
import compress from 'koa-compress';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.js';
import type { Services } from '../services.js';
import type { ApiMetrics } from '../metrics/api-metrics.js';
import { COMPRESSION } from './compression.js';
import { consoleStatic, type ConsoleAssets } from './console-static.js';
import { FastReads, type NodeHandler } from './fast-reads.js';
import { authn } from './middleware/authn.js';
import { consistency } from './middleware/consistency.js';
import { httpMetrics } from './middleware/http-metrics.js';
import { traceRequest } from './middleware/trace-request.js';
import { tracingOn } from '../tracing/spans.js';
import { jsonResponse } from './middleware/json-response.js';
import { requestContext, type State } from './middleware/request-context.js';
import { Contract, type RouteTarget } from './openapi/contract.js';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi/document.js';
import { mountHealthRoutes } from './routes/health-routes.js';
import { mountApiRoutes } from './routes/index.js';
import { mountOpenApiRoute } from './routes/openapi-routes.js';

export interface AppDeps {
  services: Services;
  authenticator: Authenticator;
  logger: Logger;
  bodyLimit: number;
  /** Count and time requests here (by route template). */
  metrics?: ApiMetrics;
  /** Origins allowed to call the API from a browser (`*`: any); empty: no CORS headers. */
  corsOrigins?: readonly string[];
  /** The features' routes (src/features.ts), mounted on the authenticated router after the core's. */
  features?: { rest(t: RouteTarget, bodyLimit: number): void };
  /** Extra public routes (STS, OIDC discovery) mounted outside the API's authentication. */
  publicRoutes?: (t: RouteTarget) => void;
  /** The address the OpenAPI document names as its server (ARBOR_ISSUER_URL). */
  serverUrl: string;
  /**
   * The built web console served at `/console/` (and `/` redirecting there); its CSP lets
   * it call `loginIssuer` too (the PKCE token request). Absent: `/console/` says unbuilt.
   */
  console?: { assets: ConsoleAssets | undefined; loginIssuer?: string | undefined };
  /** Serve the hot reads outside Koa (default on; off to compare the two paths in tests). */
  fastReads?: boolean;
}

export interface ApiApp {
  app: Koa;
  /** The OpenAPI document of every route the app serves (also at `/openapi.json`). */
  openapi: OpenApiDocument;
  /** The door as a node:http handler: the fast reads, then Koa for everything else. */
  handler: NodeHandler;
  /** The fast reads, when they are on. */
  fastReads: FastReads | undefined;
}

/**
 * One routing rule for every router: paths are case-sensitive and slash-exact, as they
 * are written in the routes. A prefix test that disagreed with the router about case once
 * let `/IAM/v2beta1/groups` reach a handler with no principal; a lenient trailing slash
 * once made `POST /iam/v2beta1/groups/` (an empty parent) create a root organization.
 */
const ROUTING = { sensitive: true, strict: true } as const;

/**
 * Spellings that look like the API. Only decides how an unknown path is refused (401 for
 * anonymous callers, so a scan learns nothing about which routes exist); it is not the
 * authentication itself, which sits on the API router and so runs for whatever matched.
 * Case-insensitive, any number of leading slashes, percent-decoded: wider than the router.
 */
const API_LIKE = /^\/+(iam|registry|vulnerabilities|audit|events)(\/|$)/i;

function looksLikeApi(path: string): boolean {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    /* a malformed escape: test the raw spelling */
  }
  return API_LIKE.test(path) || API_LIKE.test(decoded);
}

/**
 * The REST front door: parse, call a service, shape the answer. No rules live here. Every
 * route is recorded in one contract as it is mounted, and the OpenAPI document is built
 * from that contract once all are.
 */
export function createApp(d: AppDeps): ApiApp {
  const app = new Koa({ proxy: false });
  const contract = new Contract();
  const publicRouter = new Router(ROUTING);

  const origins = d.corsOrigins ?? [];
  const fast =
    d.fastReads === false
      ? undefined
      : new FastReads({
          authenticator: d.authenticator,
          logger: d.logger,
          ...(d.metrics ? { metrics: d.metrics } : {}),
          cors: origins.length > 0,
        });
  // The public routes may serve a read outside Koa too (the registry token server).
  const pub = { router: publicRouter, contract, ...(fast ? { fast } : {}) };
  mountOpenApiRoute(pub, () => openapi);
  mountHealthRoutes(pub, d.services.health);
  d.publicRoutes?.(pub);

  const requireAuth = authn(d.authenticator);
  const api = new Router(ROUTING);
  // Registered before any route, so it runs first for every route this router matches:
  // no spelling of a path can reach an API handler without a principal.
  api.use(async (ctx, next) => {
    if ((ctx.state as State).principal) await next();
    else await requireAuth(ctx, next);
  });
  const apiTarget = { router: api, contract, ...(fast ? { fast } : {}) };
  mountApiRoutes(apiTarget, d.services, d.bodyLimit);
  d.features?.rest(apiTarget, d.bodyLimit);
  const openapi = buildOpenApiDocument(contract, { serverUrl: d.serverUrl });

  if (tracingOn()) app.use(traceRequest());
  if (d.metrics) app.use(httpMetrics(d.metrics));
  // Large answers (lists) compressed when the client accepts it.
  app.use(compress({ ...COMPRESSION }));
  app.use(jsonResponse());
  if (origins.length > 0) app.use(corsFor(origins));
  app.use(requestContext(d.logger));
  app.use(consistency());
  // Public static files, before the API's gate: nothing under /console is the API.
  app.use(consoleStatic(d.console?.assets, d.console?.loginIssuer));
  app.use(async (ctx, next) => {
    if (looksLikeApi(ctx.path)) await requireAuth(ctx, next);
    else await next();
  });
  for (const r of [publicRouter, api]) {
    app.use(r.routes());
    // 405/501 come back as bare statuses (with Allow set); requestContext types them (as 405).
    app.use(r.allowedMethods());
  }
  const koa = app.callback() as unknown as NodeHandler;
  return {
    app,
    openapi,
    handler: fast ? fast.handler(koa) : koa,
    fastReads: fast,
  };
}

/**
 * CORS for an allow-list: a listed origin gets its own name back (never `*` with
 * credentials; bearer tokens need none), so do preflights; any other origin gets no CORS
 * headers and the browser refuses the answer.
 */
function corsFor(origins: readonly string[]) {
  const any = origins.includes('*');
  return cors({
    origin: (ctx) => {
      const origin = ctx.get('origin');
      return any || origins.includes(origin) ? origin : '';
    },
    allowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowHeaders: [
      'authorization',
      'content-type',
      'if-match',
      'x-request-id',
      'arbor-consistency-token',
    ],
    exposeHeaders: ['etag', 'x-request-id', 'retry-after', 'arbor-consistency-token'],
    maxAge: 600,
    // Error answers (401, 404) are readable by the allowed origin too.
    keepHeadersOnError: true,
  });
}
