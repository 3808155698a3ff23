import test from 'ava';
import type { CoreV1Event } from '@kubernetes/client-node';
import { pino } from 'pino';
import { KubeEventSink, type EventWriter } from '../../src/reconciler/events.js';
import type { ArborObject } from '../../src/reconciler/resources.js';

/**
 * An API server stand-in for the two Event calls: `create` answers only after `createDelayMs`,
 * so a repeat emitted meanwhile lands in the window where the first Event is posted but its
 * answer has not come back yet (where a repeat once raced its own create).
 */
function fakeEvents(createDelayMs: number) {
  const created: CoreV1Event[] = [];
  const patches: { name: string; count: number }[] = [];
  let seq = 0;
  const writer = {
    createNamespacedEvent: async ({ body }: { namespace: string; body: CoreV1Event }) => {
      const name = `${body.metadata?.generateName ?? ''}${++seq}`;
      const event = { ...body, metadata: { ...body.metadata, name } };
      created.push(event);
      await new Promise((r) => setTimeout(r, createDelayMs));
      return event;
    },
    patchNamespacedEvent: ({ name, body }: { name: string; body: { count: number } }) => {
      patches.push({ name, count: body.count });
      return Promise.resolve({} as CoreV1Event);
    },
  } as unknown as EventWriter;
  return { writer, created, patches };
}

const obj: ArborObject = {
  apiVersion: 'arbor.dev/v1alpha1',
  kind: 'Group',
  metadata: { namespace: 'team-a', name: 'platform', uid: 'u-1', resourceVersion: '7' },
  spec: {},
} as unknown as ArborObject;

const silent = pino({ level: 'silent' });

test('event sink: N emits of one event without awaiting make one create and N-1 patches', async (t) => {
  const api = fakeEvents(30);
  const sink = new KubeEventSink(api.writer, silent, 'test');
  const n = 7;
  for (let i = 0; i < n; i++) sink.emit('Group', obj, 'Warning', 'SyncFailed', 'parent missing');
  await sink.flush();
  t.is(api.created.length, 1);
  t.deepEqual(
    api.patches,
    Array.from({ length: n - 1 }, (_, i) => ({
      name: api.created[0]?.metadata?.name ?? '',
      count: i + 2,
    })),
  );
});

test('event sink: different events are not serialised behind each other or merged', async (t) => {
  const api = fakeEvents(30);
  const sink = new KubeEventSink(api.writer, silent, 'test');
  sink.emit('Group', obj, 'Warning', 'SyncFailed', 'parent missing');
  sink.emit('Group', obj, 'Normal', 'Synced', 'ok');
  sink.emit('Group', obj, 'Warning', 'SyncFailed', 'parent missing');
  await sink.flush();
  t.deepEqual(api.created.map((e) => e.reason).sort(), ['SyncFailed', 'Synced']);
  t.is(api.patches.length, 1);
});

test('event sink: a repeat after a failed create posts the Event anew', async (t) => {
  const api = fakeEvents(5);
  const create = api.writer.createNamespacedEvent.bind(api.writer);
  let fail = true;
  (api.writer as { createNamespacedEvent: unknown }).createNamespacedEvent = async (
    ...args: Parameters<EventWriter['createNamespacedEvent']>
  ) => {
    if (fail) {
      fail = false;
      throw new Error('apiserver unavailable');
    }
    return create(...args);
  };
  const sink = new KubeEventSink(api.writer, silent, 'test');
  sink.emit('Group', obj, 'Warning', 'SyncFailed', 'parent missing');
  sink.emit('Group', obj, 'Warning', 'SyncFailed', 'parent missing');
  await sink.flush();
  t.is(api.created.length, 1);
  t.is(api.patches.length, 0);
});
