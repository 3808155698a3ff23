import { context, trace, type Attributes } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import test from 'ava';
import {
  currentTraceparent,
  endServerSpan,
  logContext,
  pauseTracing,
  setTracingOn,
  tracingOn,
  spanEvent,
  startChildSpan,
  startServerSpan,
  storedParent,
  traceFields,
  withSpan,
  withSpanFor,
  within,
} from '../../src/tracing/spans.js';
import { PooledIdGenerator } from '../../src/tracing/pooled-id-generator.js';
import { unsampledRootOf } from '../../src/tracing/unsampled-root.js';
import { reconcileSpan } from '../../src/reconciler/reconcile-span.js';
import { RETRY } from '../../src/reconciler/work-queue.js';

/**
 * The hooks against the real SDK (its default sampler, parent-based always-on: a caller's
 * `traceparent` decides, flags 01 or 00), spans kept in memory. Serial: the OpenTelemetry
 * API is one process-wide registry.
 */
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(exporter)],
  idGenerator: new PooledIdGenerator(),
});
provider.register();
test.beforeEach(() => {
  exporter.reset();
  setTracingOn(true);
});
test.after.always(() => provider.shutdown());

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
/** An attributes thunk for a span that must not record: calling it fails the test. */
const unrecorded = (): Attributes => {
  throw new Error('attributes built for a span that does not record');
};
const CALLER = '00f067aa0ba902b7';
const header = (flags: '00' | '01') => ({ traceparent: `00-${TRACE}-${CALLER}-${flags}` });

/** An attributes thunk that counts its calls. */
function counted(a: Attributes): { fn: () => Attributes; calls: () => number } {
  let n = 0;
  return {
    fn: () => {
      n++;
      return a;
    },
    calls: () => n,
  };
}

test.serial('an unsampled request: no attributes built, no SQL spans, context kept', (t) => {
  const start = counted({ 'url.path': '/x' });
  const end = counted({ 'http.response.status_code': 200 });
  const s = startServerSpan('GET /x', header('00'), 'req-1', start.fn)!;
  t.false(s.span.isRecording());
  within(s, () => {
    let named = 0;
    const sql = startChildSpan(
      () => {
        named++;
        return 'SELECT';
      },
      () => ({}),
    );
    t.is(sql, undefined, 'no span per statement under a parent that does not record');
    t.is(named, 0, 'not even its name is made');
    spanEvent('access.decision', { 'arbor.access.allowed': true });
    // The trace still flows: logs carry it, later work can join it (unsampled, as it was).
    t.deepEqual(logContext(), {
      traceId: TRACE,
      spanId: s.span.spanContext().spanId,
      requestId: 'req-1',
    });
    t.is(currentTraceparent(), `00-${TRACE}-${s.span.spanContext().spanId}-00`);
  });
  endServerSpan(s, end.fn, false);
  t.is(start.calls(), 0);
  t.is(end.calls(), 0);
  t.is(exporter.getFinishedSpans().length, 0);
});

test.serial('a sampled request: attributes, events and SQL spans under it', (t) => {
  const s = startServerSpan('GET /x', header('01'), 'req-2', () => ({ 'url.path': '/x' }))!;
  t.true(s.span.isRecording());
  within(s, () => {
    const sql = startChildSpan(
      () => 'SELECT',
      () => ({ 'db.system.name': 'postgresql' }),
    );
    t.truthy(sql);
    sql!.end();
    spanEvent('access.decision', { 'arbor.access.allowed': true });
    t.is(currentTraceparent(), `00-${TRACE}-${s.span.spanContext().spanId}-01`);
  });
  endServerSpan(s, () => ({ 'http.response.status_code': 200 }), false, 'GET /x/{uid}');
  const [sql, server] = exporter.getFinishedSpans();
  t.is(server!.name, 'GET /x/{uid}');
  t.is(server!.attributes['url.path'], '/x');
  t.is(server!.attributes['arbor.request_id'], 'req-2');
  t.is(server!.attributes['http.response.status_code'], 200);
  t.is(server!.parentSpanContext?.spanId, CALLER);
  t.deepEqual(
    server!.events.map((e) => e.name),
    ['access.decision'],
  );
  t.is(sql!.parentSpanContext?.spanId, server!.spanContext().spanId);
});

test.serial('paused, the hooks make nothing; resumed, they trace as before', (t) => {
  const resume = pauseTracing();
  t.false(tracingOn());
  t.is(startServerSpan('GET /x', header('01'), 'req-p', unrecorded), undefined);
  t.deepEqual(exporter.getFinishedSpans(), []);
  resume();
  t.true(tracingOn());
  const s = startServerSpan('GET /x', header('01'), 'req-r', () => ({ 'url.path': '/x' }))!;
  endServerSpan(s, () => ({ 'http.response.status_code': 200 }), false);
  const [span] = exporter.getFinishedSpans();
  t.is(span?.spanContext().traceId, TRACE);
  t.is(span?.attributes['url.path'], '/x');
});

test.serial('outside any trace: no SQL span, no traceparent to store', (t) => {
  t.is(
    startChildSpan(
      () => 'SELECT',
      () => ({}),
    ),
    undefined,
  );
  t.is(currentTraceparent(), undefined);
  t.deepEqual(logContext(), {});
});

test.serial('a stored traceparent is read strictly, and nothing else is', (t) => {
  const good = `00-${TRACE}-${CALLER}-01`;
  t.deepEqual(storedParent(good), {
    traceId: TRACE,
    spanId: CALLER,
    traceFlags: 1,
    isRemote: true,
  });
  t.is(storedParent(`00-${TRACE}-${CALLER}-00`)?.traceFlags, 0);
  for (const bad of [
    undefined,
    null,
    42,
    {},
    '',
    good.toUpperCase(),
    ` ${good}`,
    `${good} `,
    `${good}\n`,
    `${good}-extra`,
    `01-${TRACE}-${CALLER}-01`, // a later version: its fields may mean other things
    `ff-${TRACE}-${CALLER}-01`,
    `00-${TRACE}-${CALLER}-03`, // flags other than sampled
    `00-${TRACE}-${CALLER}-ff`,
    `00-${'0'.repeat(32)}-${CALLER}-01`, // all-zero ids are invalid
    `00-${TRACE}-${'0'.repeat(16)}-01`,
    `00-${TRACE.slice(1)}g-${CALLER}-01`,
    `00-${TRACE}-${CALLER}-01\r\nx-injected: 1`,
    `00-${TRACE}${CALLER}-01`,
  ])
    t.is(storedParent(bad), undefined, JSON.stringify(bad));
});

test.serial(
  'a send links the stored trace, not joins it: the sink gets the job’s trace',
  async (t) => {
    // A request's trace id and flag may be its caller's choice: by default never adopted.
    let sent: string | undefined;
    await withSpan(
      'event delivery',
      () => ({}),
      () =>
        withSpanFor(
          `00-${TRACE}-${CALLER}-01`,
          'event send',
          () => ({}),
          () => {
            sent = currentTraceparent();
            return Promise.resolve();
          },
        ),
    );
    const [send, job] = exporter.getFinishedSpans();
    t.is(send!.name, 'event send');
    t.is(send!.parentSpanContext?.spanId, job!.spanContext().spanId, "the job's child");
    t.is(send!.spanContext().traceId, job!.spanContext().traceId);
    t.not(send!.spanContext().traceId, TRACE);
    t.deepEqual(
      send!.links.map((l) => [l.context.traceId, l.context.spanId]),
      [[TRACE, CALLER]],
      'linked to the originating request',
    );
    t.notRegex(sent ?? '', new RegExp(TRACE), 'the sink is not sent the stored trace id');
  },
);

test.serial('trusting callers, a send joins the stored trace, linked to the job', async (t) => {
  setTracingOn(true, undefined, true);
  const stored = `00-${TRACE}-${CALLER}-01`;
  await withSpan(
    'event delivery',
    () => ({}),
    () =>
      withSpanFor(
        stored,
        'event send',
        () => ({ 'arbor.x': 1 }),
        () => Promise.resolve(undefined),
      ),
  );
  const [send, job] = exporter.getFinishedSpans();
  t.is(send!.name, 'event send');
  t.is(send!.spanContext().traceId, TRACE, "the originating request's trace");
  t.is(send!.parentSpanContext?.spanId, CALLER);
  t.is(send!.attributes['arbor.x'], 1);
  t.deepEqual(
    send!.links.map((l) => l.context.spanId),
    [job!.spanContext().spanId],
    "linked to the drain's span",
  );
  t.not(job!.spanContext().traceId, TRACE);
});

test.serial('trusting callers, an unsampled origin keeps its send unsampled', async (t) => {
  setTracingOn(true, undefined, true);
  let seen: string | undefined;
  await withSpan(
    'event delivery',
    () => ({}),
    () =>
      withSpanFor(
        `00-${TRACE}-${CALLER}-00`,
        'event send',
        () => ({}),
        () => {
          seen = currentTraceparent();
          return Promise.resolve();
        },
      ),
  );
  t.regex(seen ?? '', new RegExp(`^00-${TRACE}-[0-9a-f]{16}-00$`));
  t.deepEqual(
    exporter.getFinishedSpans().map((s) => s.name),
    ['event delivery'],
  );
});

test.serial('an unusable stored traceparent is ignored: the send is the job’s child', async (t) => {
  for (const bad of [null, 'garbage', `00-${TRACE}-${CALLER}-01 `]) {
    exporter.reset();
    await withSpan(
      'event delivery',
      () => ({}),
      () =>
        withSpanFor(
          bad,
          'event send',
          () => ({}),
          () => Promise.resolve(undefined),
        ),
    );
    const [send, job] = exporter.getFinishedSpans();
    t.is(send!.parentSpanContext?.spanId, job!.spanContext().spanId);
    t.is(send!.links.length, 0);
  }
});

test.serial('a failed send is an error on its span and still thrown', async (t) => {
  await t.throwsAsync(
    withSpanFor(
      null,
      'event send',
      () => ({}),
      () => Promise.reject(new TypeError('boom')),
    ),
    { message: 'boom' },
  );
  const [send] = exporter.getFinishedSpans();
  t.is(send!.status.code, 2);
  t.is(send!.attributes['error.type'], 'TypeError');
});

test.serial('off: every hook is a no-op and calls none of its thunks', async (t) => {
  setTracingOn(false);
  const never = () => {
    throw new Error('called');
  };
  const s = startServerSpan('GET /x', header('01'), 'r', never);
  t.is(s, undefined);
  t.is(
    within(s, () => 7),
    7,
  );
  endServerSpan(s, never, true);
  t.is(startChildSpan(never, never), undefined);
  t.is(await withSpan('x', never, () => Promise.resolve(8)), 8);
  t.is(await withSpanFor(`00-${TRACE}-${CALLER}-01`, 'x', never, () => Promise.resolve(9)), 9);
  t.is(currentTraceparent(), undefined);
  t.deepEqual(logContext(), {});
  t.is(trace.getSpan(context.active()), undefined);
  t.is(exporter.getFinishedSpans().length, 0);
});

test.serial('a reconcile is a trace of its own, with its SQL and events under it', async (t) => {
  let stored: string | undefined;
  const out = await reconcileSpan('Group', 'team-a', 'web', () => {
    startChildSpan(
      () => 'UPDATE',
      () => ({ 'db.system.name': 'postgresql' }),
    )?.end();
    stored = currentTraceparent();
    return Promise.resolve(RETRY);
  });
  t.is(out, RETRY);
  const [sql, reconcile] = exporter.getFinishedSpans();
  t.is(reconcile!.name, 'reconcile Group');
  t.is(reconcile!.parentSpanContext, undefined, 'a root: a background job');
  t.like(reconcile!.attributes, {
    'k8s.namespace.name': 'team-a',
    'arbor.k8s.kind': 'Group',
    'arbor.k8s.name': 'web',
    'arbor.reconcile.outcome': 'retry',
  });
  t.is(sql!.parentSpanContext?.spanId, reconcile!.spanContext().spanId);
  // An event it records is delivered in its trace.
  t.is(storedParent(stored)?.spanId, reconcile!.spanContext().spanId);
});

test.serial('a lean request the sampler drops runs in no context; its door logs the ids', (t) => {
  const ids = new PooledIdGenerator();
  setTracingOn(true, unsampledRootOf(0, ids));
  const s = startServerSpan('GET /x', {}, 'req-lean', unrecorded, true)!;
  t.false(s.span.isRecording());
  t.is(s.ctx, undefined);
  within(s, () => {
    t.is(trace.getSpan(context.active()), undefined, 'no context entered');
    t.deepEqual(logContext(), {});
  });
  t.deepEqual(traceFields(s), {
    traceId: s.span.spanContext().traceId,
    spanId: s.span.spanContext().spanId,
  });
  endServerSpan(s, unrecorded, false);
  // Not lean, or a caller that names a parent: traced as any other request.
  const full = startServerSpan('GET /x', header('00'), 'req-2', unrecorded, true)!;
  t.not(full.ctx, undefined);
  t.is(full.span.spanContext().traceId, TRACE);
  t.deepEqual(traceFields(full), {}, 'its lines find the ids in the context');
  const notLean = startServerSpan('GET /x', {}, 'req-3', () => ({}), false)!;
  t.not(notLean.ctx, undefined);
  notLean.span.end();
  t.is(
    exporter.getFinishedSpans().length,
    1,
    'only the one the sampler kept (always on) is exported',
  );
});
