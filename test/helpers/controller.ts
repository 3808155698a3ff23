import type { ExecutionContext } from 'ava';
import { pino } from 'pino';
import { Controller, type ControllerOptions } from '../../src/reconciler/controller.js';
import { countingServices, type TestCluster } from './kube.js';
import type { TestServer } from './server.js';

const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });

/**
 * A reconciler for one namespace of `cluster`, writing through `server`'s services with
 * their create/update/delete calls counted, stopped when the test ends. No leader election
 * and resyncs an hour away (the tests trigger them), retries fast: what every reconciler
 * end-to-end file wants unless it says otherwise in `extra`.
 */
export function startController(
  t: ExecutionContext,
  cluster: TestCluster,
  server: TestServer,
  namespace: string,
  extra: Partial<ControllerOptions> = {},
) {
  const counted = countingServices(server.arbor.services, ['groups', 'identities', 'roleBindings']);
  const controller = new Controller({
    kubeConfig: cluster.kc,
    services: counted.services,
    logger,
    namespace,
    leaderElection: false,
    resyncMs: 3_600_000,
    // Informers back off 1 s doubling while the apiserver is away; cap retries low here.
    queue: { baseDelayMs: 100, maxDelayMs: 2_000 },
    ...extra,
  });
  controller.start();
  t.teardown(() => controller.stop());
  return { controller, ...counted };
}
