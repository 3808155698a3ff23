import test from 'ava';
import { Registry } from 'prom-client';
import { ReconcilerMetrics } from '../../src/reconciler/reconciler-metrics.js';
import { DONE, RETRY, WorkQueue, type Outcome } from '../../src/reconciler/work-queue.js';

async function value(registry: Registry, name: string, labels: Record<string, string>) {
  const m = await registry.getSingleMetric(name)!.get();
  const v = m.values.find((x) =>
    Object.entries(labels).every(([k, want]) => String(x.labels[k]) === want),
  );
  return v?.value;
}

test('reconciler metrics: controller-runtime names count reconciles, errors, retries and adds', async (t) => {
  const registry = new Registry();
  let leader = false;
  const metrics = new ReconcilerMetrics(registry, () => leader);
  // Group/a fails twice then converges; Identity/b throws once then converges.
  const plan = new Map<string, Array<Outcome | 'throw'>>([
    ['Group/ns/a', [RETRY, RETRY, DONE]],
    ['Identity/ns/b', ['throw', DONE]],
  ]);
  let finished!: () => void;
  const allDone = new Promise<void>((r) => (finished = r));
  const q = new WorkQueue({
    baseDelayMs: 1,
    observer: metrics.queueObserver,
    process: (key) => {
      const next = plan.get(key)!.shift()!;
      if ([...plan.values()].every((p) => p.length === 0)) setTimeout(finished, 20);
      if (next === 'throw') return Promise.reject(new Error('boom'));
      return Promise.resolve(next);
    },
  });
  q.start();
  q.add('Group/ns/a');
  q.add('Identity/ns/b');
  await allDone;
  await q.stop();

  t.is(
    await value(registry, 'controller_runtime_reconcile_total', {
      controller: 'group',
      result: 'error',
    }),
    2,
  );
  t.is(
    await value(registry, 'controller_runtime_reconcile_total', {
      controller: 'group',
      result: 'success',
    }),
    1,
  );
  t.is(
    await value(registry, 'controller_runtime_reconcile_total', {
      controller: 'identity',
      result: 'error',
    }),
    1,
  );
  t.is(
    await value(registry, 'controller_runtime_reconcile_errors_total', { controller: 'group' }),
    2,
  );
  t.is(
    await value(registry, 'controller_runtime_reconcile_errors_total', { controller: 'identity' }),
    1,
  );
  t.is(await value(registry, 'workqueue_retries_total', { name: 'arbor' }), 3);
  t.is(await value(registry, 'workqueue_adds_total', { name: 'arbor' }), 5);
  t.is(await value(registry, 'workqueue_depth', { name: 'arbor' }), 0);
  const text = await registry.metrics();
  t.regex(text, /^controller_runtime_reconcile_time_seconds_count\{controller="group"\} 3$/m);
  t.is(await value(registry, 'leader_election_master_status', { name: 'arbor-reconciler' }), 0);
  leader = true;
  t.is(await value(registry, 'leader_election_master_status', { name: 'arbor-reconciler' }), 1);
});
