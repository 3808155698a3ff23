import {
  InMemorySpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { SpanKind } from '@opentelemetry/api';
import test from 'ava';
import { setTracingOn } from '../../src/tracing/spans.js';
import { createGroup } from '../helpers/fixtures.js';
import { FAST_DELIVERY, startEventSink, until, type EventSink } from '../helpers/event-sink.js';
import { newTraceparent, parseTraceparent } from '../helpers/jaeger.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * An event's deliveries join the trace of the request that recorded it (migration 0024):
 * the outbox row keeps that request's `traceparent`, in the one form the column accepts,
 * and the send to the sink continues it where callers' trace context is trusted
 * (ARBOR_TRACE_TRUST_PARENT=true; by default the send only links it, as
 * test/unit/tracing-spans.test.ts holds). On both databases, against the real SDK (its
 * default parent-based sampler: the caller's flags decide), spans kept in memory.
 */
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

let s: TestServer;
let sink: EventSink;
let root: string;

test.before(async () => {
  provider.register();
  // Before compose: the doors and the query observer install their hooks only when on.
  setTracingOn(true, undefined, true);
  s = await startServer(FAST_DELIVERY);
  sink = await startEventSink('up');
  root = await createGroup(s.admin, 'traced-events');
  const sub = await s.admin.post(`/events/v2beta1/subscriptions/${root}`, {
    name: 'hook',
    sink: sink.url,
  });
  if (sub.status !== 200) throw new Error(JSON.stringify(sub.body));
});
test.after.always(async () => {
  await s?.close();
  await sink?.close();
  setTracingOn(false);
  await provider.shutdown();
});

/** Creates a group under `root` with `traceparent`; its uid. */
async function tracedCreate(name: string, traceparent: string): Promise<string> {
  const r = await s.admin.raw(`/iam/v2beta1/groups/${root}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent },
    body: JSON.stringify({ name }),
  });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return (r.body as { uid: string }).uid;
}

const outbox = () =>
  s.arbor.db.knex('event_outbox').select('event_seq', 'traceparent').orderBy('event_seq');

test.serial('the outbox keeps the recording request’s traceparent, and nothing else', async (t) => {
  const tp = newTraceparent();
  await tracedCreate('kept', tp.header);
  const rows = await outbox();
  const stored = rows.at(-1)?.traceparent as string;
  const parsed = parseTraceparent(stored);
  t.is(parsed?.traceId, tp.traceId, "the caller's trace");
  t.not(parsed?.spanId, tp.spanId, "Arbor's own server span, not the caller's");
  t.regex(stored, /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  const server = exporter
    .getFinishedSpans()
    .find((x) => x.kind === SpanKind.SERVER && x.spanContext().traceId === tp.traceId);
  t.is(parsed?.spanId, server?.spanContext().spanId);

  // The column takes that one form only: whatever else a writer tried is refused.
  const seq = rows.at(-1)!.event_seq as string;
  for (const bad of [
    `${stored} `,
    `${stored},congo=t61rcWkgMzE`,
    stored.toUpperCase(),
    `01-${tp.traceId}-${tp.spanId}-01`,
    `00-${tp.traceId}-${tp.spanId}-09`,
    `00-${tp.traceId}-${tp.spanId}-01\nx: y`,
  ])
    await t.throwsAsync(
      s.arbor.db.knex('event_outbox').where({ event_seq: seq }).update({ traceparent: bad }),
      { message: /event_outbox_traceparent_format/ },
      JSON.stringify(bad),
    );
});

test.serial('a delivery continues the trace of the request that made its event', async (t) => {
  const tp = newTraceparent();
  const sampledUid = await tracedCreate('sampled', tp.header);
  const unsampled = newTraceparent();
  const unsampledUid = await tracedCreate('unsampled', unsampled.header.replace(/-01$/, '-00'));
  s.arbor.delivery.start();
  const sent = (uid: string) => sink.accepted().find((r) => r.body.subject === uid);
  await until('both events delivered', () => sent(sampledUid) && sent(unsampledUid));

  // The sink's traceparent is in the request's trace, sampled as the request was.
  const header = String(sent(sampledUid)!.headers.traceparent);
  t.is(parseTraceparent(header)?.traceId, tp.traceId);
  t.regex(header, /-01$/);
  const quiet = String(sent(unsampledUid)!.headers.traceparent);
  t.is(parseTraceparent(quiet)?.traceId, unsampled.traceId);
  t.regex(quiet, /-00$/, 'an unsampled request’s deliveries are not sampled either');

  // In the trace: request ← event send ← POST to the sink; the send links the drain.
  const spans = exporter.getFinishedSpans();
  const inTrace = spans.filter((x) => x.spanContext().traceId === tp.traceId);
  const server = inTrace.find((x) => x.kind === SpanKind.SERVER)!;
  const send = inTrace.find((x) => x.name === 'event send')!;
  const post = inTrace.find((x) => x.name === 'POST')!;
  t.truthy(send, 'the send is in the request’s trace');
  t.is(send.parentSpanContext?.spanId, server.spanContext().spanId);
  t.is(send.attributes['cloudevents.event_subject'], sampledUid);
  t.is(post.parentSpanContext?.spanId, send.spanContext().spanId);
  t.is(parseTraceparent(header)?.spanId, post.spanContext().spanId);
  // The drain ends after its sends (it still marks them delivered and gives its lease back).
  const drain = await until("the drain's span", () =>
    exporter
      .getFinishedSpans()
      .find(
        (x) =>
          x.name === 'event delivery' && x.spanContext().spanId === send.links[0]?.context.spanId,
      ),
  );
  t.not(drain!.spanContext().traceId, tp.traceId);
  t.false(
    spans.some((x) => x.spanContext().traceId === unsampled.traceId),
    'nothing of the unsampled trace is recorded',
  );
});
