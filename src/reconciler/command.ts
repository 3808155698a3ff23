import { createServer, type Server } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import { compose } from '../compose.js';
import { loadConfig } from '../config.js';
import { ClusterTrust } from './cluster-trust.js';
import { Controller } from './controller.js';
import { loadReconcilerConfig } from './reconciler-config.js';
import { ApiMetrics } from '../metrics/api-metrics.js';
import { startMetricsServer } from '../metrics/metrics-server.js';
import { databaseFailure, listenFailure } from '../startup-error.js';
import { ReconcilerMetrics } from './reconciler-metrics.js';
import { startTracing } from '../tracing/start-tracing.js';

/**
 * `/healthz` answers while the process runs, from before migrations start (so that a long
 * migration is never restarted by the liveness probe); `/readyz` once this replica is
 * either a follower or a leader whose informers have listed everything. Readiness must not
 * hinge on leadership, or the followers would never become ready and rollouts would stall.
 */
async function healthServer(port: number, ready: () => boolean): Promise<Server> {
  const server = createServer((req, res) => {
    const ok = req.url === '/healthz' || (req.url === '/readyz' && ready());
    res.writeHead(ok ? 200 : req.url === '/readyz' ? 503 : 404, { 'content-type': 'text/plain' });
    res.end(ok ? 'ok\n' : 'not ready\n');
  });
  // A taken port is an operator's mistake: one line naming the variable, not a stack trace
  // from an unhandled 'error' event.
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) =>
      reject(listenFailure(e, 'ARBOR_RECONCILER_HEALTH_PORT', port, '0.0.0.0')),
    );
    server.listen(port, resolve);
  });
  return server;
}

/**
 * `arbor reconcile`: sync Group, Identity and RoleBinding custom resources into Arbor
 * through the same services as the REST API. The cluster comes from KUBECONFIG or the
 * in-cluster service account (`KubeConfig.loadFromDefault`). `version` is the package's
 * (`service.version` of its traces, when OTEL_* turns tracing on).
 */
export async function reconcileCommand(version = '0.0.0'): Promise<void> {
  const config = loadConfig();
  const rc = loadReconcilerConfig();
  // Before compose: the query observer traces SQL only when tracing is on then.
  const tracing = await startTracing(version);
  const started: { controller?: Controller } = {};
  const health =
    rc.healthPort > 0
      ? await healthServer(rc.healthPort, () => {
          const c = started.controller;
          return c !== undefined && (!c.isLeader || c.synced);
        })
      : undefined;
  // Process, database and controller-runtime metrics on METRICS_PORT (0: off).
  const metrics = new ApiMetrics(true);
  const rm = new ReconcilerMetrics(metrics.registry, () => started.controller?.isLeader ?? false);
  const metricsServer =
    config.metricsPort > 0
      ? await startMetricsServer(metrics.registry, config.metricsPort, config.host)
      : undefined;
  const arbor = await compose(config, { metrics }).catch((e: unknown) => {
    throw databaseFailure(e, config.databaseUrl);
  });
  const { logger } = arbor;
  if (tracing) logger.info({ exporter: process.env.OTEL_TRACES_EXPORTER }, 'tracing on');
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const controller = new Controller({
    kubeConfig: kc,
    services: arbor.services,
    logger,
    namespace: rc.watchNamespace,
    leaderElection: rc.leaderElection && {
      namespace: rc.leaseNamespace,
      name: rc.leaseName,
      identity: rc.identity,
    },
    resyncMs: rc.resyncMs,
    queue: { concurrency: rc.workers, ratePerSecond: rc.ratePerSecond, observer: rm.queueObserver },
    adminNamespaces: rc.adminNamespaces,
  });
  started.controller = controller;
  // Idempotent (an unchanged key set writes nothing), so every replica may run it.
  const trust = rc.clusterTrust
    ? new ClusterTrust({ kubeConfig: kc, trustedKeys: arbor.services.trustedKeys, logger })
    : undefined;
  trust?.start();
  controller.start();
  logger.info(
    {
      cluster: kc.getCurrentCluster()?.server,
      watch: rc.watchNamespace ?? '(all namespaces)',
      lease: rc.leaderElection ? `${rc.leaseNamespace}/${rc.leaseName}` : '(none)',
      identity: rc.identity,
      adminNamespaces: rc.adminNamespaces,
      database: arbor.db.kind,
    },
    'arbor reconciler started',
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'reconciler shutting down: finishing in-flight reconciles');
    trust?.stop();
    // Releasing the Lease on the way out lets the next replica take over at once.
    void controller
      .stop()
      .then(() => new Promise<void>((r) => (health ? health.close(() => r()) : r())))
      .then(() => metricsServer?.close())
      .then(() => arbor.close())
      // The spans of the last reconciles are exported before the process goes.
      .then(() => tracing?.())
      .then(
        () => {
          logger.info('reconciler stopped');
          process.exit(0);
        },
        (e: unknown) => {
          logger.error({ err: e }, 'unclean shutdown');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
