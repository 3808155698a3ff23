import { Counter, Gauge, Histogram, type Registry, type RegistryContentType } from 'prom-client';
import type { Outcome, WorkQueueObserver } from './work-queue.js';

/** The queue's name in `workqueue_*` series: one queue serves every kind. */
const QUEUE = 'arbor';

/** The controller label: the kind, lowercased, from a `Kind/namespace/name` key. */
function controllerOf(key: string): string {
  return key.slice(0, Math.max(0, key.indexOf('/'))).toLowerCase() || 'unknown';
}

/**
 * The reconciler's metrics under controller-runtime's and client-go's names, so that the
 * dashboards and alerts written for Go operators work unchanged. A reconcile that asks to
 * be retried counts as an error (it failed or waits on something), one that asks to run
 * again later as `requeue_after`.
 */
export class ReconcilerMetrics {
  readonly reconciles: Counter<'controller' | 'result'>;
  readonly errors: Counter<'controller'>;
  readonly time: Histogram<'controller'>;
  readonly depth: Gauge<'name'>;
  readonly adds: Counter<'name'>;
  readonly retries: Counter<'name'>;

  constructor(registry: Registry<RegistryContentType>, isLeader: () => boolean) {
    const registers = [registry];
    this.reconciles = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.errors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.time = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.depth = new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: ['name'],
      registers,
    });
    this.adds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    this.retries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    new Gauge({
      name: 'leader_election_master_status',
      help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.',
      labelNames: ['name'],
      registers,
      collect() {
        this.set({ name: 'arbor-reconciler' }, isLeader() ? 1 : 0);
      },
    });
    this.depth.set({ name: QUEUE }, 0);
  }

  /** The hooks to hand the work queue (`queue.observer`). */
  readonly queueObserver: WorkQueueObserver = {
    added: () => this.adds.inc({ name: QUEUE }),
    depth: (n) => this.depth.set({ name: QUEUE }, n),
    retried: () => this.retries.inc({ name: QUEUE }),
    done: (key: string, outcome: Outcome | 'error', seconds: number) => {
      const controller = controllerOf(key);
      this.time.observe({ controller }, seconds);
      const failed = outcome === 'error' || outcome.kind === 'retry';
      const result = failed ? 'error' : outcome.kind === 'after' ? 'requeue_after' : 'success';
      this.reconciles.inc({ controller, result });
      if (failed) this.errors.inc({ controller });
    },
  };
}
