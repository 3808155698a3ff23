import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { unavailable } from '../core/rpc-error.js';

/** `starting`: migrating, not yet serving; `serving`; `draining`: SIGTERM received. */
export type Phase = 'starting' | 'serving' | 'draining';

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

/**
 * The HTTP listener's view of the process's life, in front of the Koa app, so that the
 * probes answer from the first moment the port is bound:
 * - `/healthz` (liveness) is 200 in every phase: a long migration is alive and must not
 *   be restarted by the kubelet.
 * - `/startupz` (startup probe) is 503 until migrations are applied and the app serves.
 * - `/readyz` (readiness) is 503 while starting and from the moment SIGTERM arrives (so
 *   the Service stops routing here before the listener closes); otherwise the app's own
 *   check, which asks the database.
 * Everything else is 503 UNAVAILABLE while starting, and the app's once serving.
 */
export class Lifecycle {
  private current: Phase = 'starting';
  private app: RequestListener | undefined;

  get phase(): Phase {
    return this.current;
  }

  /** Migrations are done: hand every request to the app. */
  serve(app: RequestListener): void {
    this.app = app;
    if (this.current === 'starting') this.current = 'serving';
  }

  /** SIGTERM: readiness fails from now on; requests are still served until the listener closes. */
  drain(): void {
    this.current = 'draining';
  }

  readonly listener: RequestListener = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (this.current === 'draining') {
      // Keep-alive clients should reconnect elsewhere rather than reuse this socket
      // (HTTP/2 forbids the header: its sessions get a GOAWAY when the listener closes).
      if (req.httpVersionMajor < 2) res.setHeader('connection', 'close');
      if (path === '/readyz') return send(res, 503, unavailable('shutting down').toStatus());
    }
    if (path === '/startupz') {
      return this.app
        ? send(res, 200, { status: 'ok' })
        : send(res, 503, unavailable('starting: applying database migrations').toStatus());
    }
    if (!this.app) {
      if (path === '/healthz') return send(res, 200, { status: 'ok', phase: 'starting' });
      res.setHeader('retry-after', '5');
      return send(res, 503, unavailable('starting: applying database migrations').toStatus());
    }
    this.app(req, res);
  };
}
