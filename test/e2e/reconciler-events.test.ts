import { pino } from 'pino';
import { KubeEventSink } from '../../src/reconciler/events.js';
import type { ArborObject } from '../../src/reconciler/resources.js';
import { kubeSuite } from '../helpers/controller.js';
import { crs, eventually, type TestCluster } from '../helpers/kube.js';

/** Events against the real apiserver: repeats are aggregated like client-go's recorder. */
let cluster: TestCluster;
const maybe = kubeSuite('events e2e', (c) => {
  cluster = c;
});

maybe('events: a repeated event bumps count on one Event instead of adding Events', async (t) => {
  const ns = await cluster.namespace('events');
  const k = crs(cluster, ns);
  const obj = (await k.apply('Group', 'noisy', {})) as ArborObject;
  const sink = new KubeEventSink(cluster.kc, pino({ level: 'silent' }), 'test');
  const list = async () =>
    (await cluster.core.listNamespacedEvent({ namespace: ns })).items.filter(
      (e) => e.involvedObject.name === 'noisy',
    );
  sink.emit('Group', obj, 'Warning', 'NotFound', 'parent missing');
  await eventually('the first Event', async () => ((await list()).length === 1 ? true : undefined));
  for (let i = 0; i < 3; i++) {
    sink.emit('Group', obj, 'Warning', 'NotFound', 'parent missing');
    const want = i + 2;
    await eventually(`count ${want}`, async () =>
      (await list())[0]?.count === want ? true : undefined,
    );
  }
  sink.emit('Group', obj, 'Normal', 'Created', 'created Group x');
  const events = await eventually('the second, different Event', async () => {
    const l = await list();
    return l.length === 2 ? l : undefined;
  });
  const repeated = events.find((e) => e.reason === 'NotFound')!;
  t.is(repeated.count, 4);
  t.true(new Date(repeated.lastTimestamp!) >= new Date(repeated.firstTimestamp!));
  t.is(events.find((e) => e.reason === 'Created')!.count, 1);
});
