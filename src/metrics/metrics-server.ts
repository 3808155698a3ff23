import { createServer, type Server } from 'node:http';
import type { Registry, RegistryContentType } from 'prom-client';
import { listenFailure } from '../startup-error.js';

/**
 * `/metrics` in the Prometheus text format (OpenMetrics when exemplars are on) on a listener of its own, so that scraping
 * needs no API token and the API port exposes nothing about the process.
 * @throws StartupError naming METRICS_PORT when the port is taken; whatever else `listen` throws.
 */
export async function startMetricsServer(
  registry: Registry<RegistryContentType>,
  port: number,
  host: string,
): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?', 1)[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics failed\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) => reject(listenFailure(e, 'METRICS_PORT', port, host)));
    server.listen(port, host, () => resolve());
  });
  return server;
}
