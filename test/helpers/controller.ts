import test, { type ExecutionContext, type TestFn } from 'ava';
import { pino } from 'pino';
import { Controller, type ControllerOptions } from '../../src/reconciler/controller.js';
import { countingServices, kubeAvailability, startCluster, type TestCluster } from './kube.js';
import { needTool } from './need-tool.js';
import { startServer, type TestServer } from './server.js';

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

/** How a suite's tests are declared: serially, or skipped when there is no cluster. */
export type Maybe = TestFn['serial'] | TestFn['skip'];

export interface SuiteOptions {
  /** Only on a control plane of our own (one the tests may restart), never an external one. */
  localOnly?: boolean;
}

/**
 * The set-up every reconciler end-to-end file shares: a control plane and a fresh Arbor,
 * started before the file's tests (then `ready` runs, in the same hook, for the file's own
 * fixtures) and closed after them. Answers the modifier to declare the tests with:
 * `test.serial` (they share the cluster), or, when there is no control plane to be had,
 * needTool's skip (a failure in CI).
 */
export function reconcilerSuite(
  what: string,
  ready: (cluster: TestCluster, server: TestServer) => void | Promise<void>,
  o: SuiteOptions = {},
): Maybe {
  return declareSuite(what, o, true, (cluster, server) => ready(cluster, server!));
}

/** `reconcilerSuite` for files that need only the control plane, not an Arbor. */
export function kubeSuite(
  what: string,
  ready: (cluster: TestCluster) => void | Promise<void>,
  o: SuiteOptions = {},
): Maybe {
  return declareSuite(what, o, false, (cluster) => ready(cluster));
}

function declareSuite(
  what: string,
  o: SuiteOptions,
  withServer: boolean,
  ready: (cluster: TestCluster, server: TestServer | undefined) => void | Promise<void>,
): Maybe {
  const kube = kubeAvailability();
  const why = !kube.available
    ? kube.reason
    : o.localOnly && kube.mode !== 'local'
      ? 'needs a local control plane'
      : undefined;
  if (why !== undefined || !kube.available) {
    return needTool(test.serial, `the Kubernetes control plane (${what})`, why);
  }
  let cluster: TestCluster | undefined;
  let server: TestServer | undefined;
  test.before(async () => {
    // Each is kept as soon as it is up, so a failure of the other still closes it.
    await Promise.all([
      startCluster(kube).then((c) => (cluster = c)),
      withServer ? startServer().then((s) => (server = s)) : undefined,
    ]);
    await ready(cluster!, server);
  });
  test.after.always(async () => {
    await server?.close();
    await cluster?.close();
  });
  return test.serial;
}
