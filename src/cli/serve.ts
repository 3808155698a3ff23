import type { Server } from 'node:http';
import { compose } from '../compose.js';
import { loadConfig } from '../config.js';

/** `arbor serve`: the API, the STS and OIDC discovery on one port. */
export async function serveCommand(): Promise<void> {
  const config = loadConfig();
  const arbor = await compose(config);
  const { logger } = arbor;
  const server: Server = arbor.app.listen(config.port, config.host);
  // Keep-alive sockets would hold shutdown open; bound how long they may idle.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  logger.info(
    {
      port: config.port,
      database: arbor.db.kind,
      issuer: config.issuerUrl,
      adminToken: config.adminToken !== undefined,
    },
    'arbor serving',
  );
  if (config.adminToken === undefined) {
    logger.warn('ARBOR_ADMIN_TOKEN is not set: only API tokens from the STS are accepted');
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    const force = setTimeout(() => {
      logger.warn('in-flight requests did not finish in 10 s; closing anyway');
      server.closeAllConnections();
    }, 10_000);
    force.unref();
    server.close(() => {
      void arbor.close().then(() => {
        logger.info('stopped');
        process.exit(0);
      });
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
