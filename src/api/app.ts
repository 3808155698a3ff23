import Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator.js';
import type { Services } from '../services.js';
import { authn } from './middleware/authn.js';
import { requestContext } from './middleware/request-context.js';
import { mountHealthRoutes } from './routes/health-routes.js';
import { mountApiRoutes } from './routes/index.js';

export interface AppDeps {
  services: Services;
  authenticator: Authenticator;
  logger: Logger;
  bodyLimit: number;
  /** Extra public routes (STS, OIDC discovery) mounted outside the API's authentication. */
  publicRoutes?: (router: Router) => void;
}

/** API prefixes: everything under them needs a bearer token, even a path that does not exist. */
const API_PREFIX = /^\/(iam|registry|vulnerabilities|audit|events)\//;

/** The REST front door: parse, call a service, shape the answer. No rules live here. */
export function createApp(d: AppDeps): Koa {
  const app = new Koa({ proxy: false });
  const publicRouter = new Router();
  mountHealthRoutes(publicRouter, d.services.health);
  d.publicRoutes?.(publicRouter);

  const api = new Router();
  mountApiRoutes(api, d.services, d.bodyLimit);

  const requireAuth = authn(d.authenticator);
  app.use(requestContext(d.logger));
  app.use(async (ctx, next) => {
    if (API_PREFIX.test(ctx.path)) await requireAuth(ctx, next);
    else await next();
  });
  for (const r of [publicRouter, api]) {
    app.use(r.routes());
    // 405/501 come back as bare statuses (with Allow set); requestContext types them.
    app.use(r.allowedMethods());
  }
  return app;
}
