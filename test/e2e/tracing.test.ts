import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create, toBinary } from '@bufbuild/protobuf';
import test from 'ava';
import { GetGroupRequestSchema, GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { BUILTIN_ROLES } from '../../src/resources/roles/builtin-roles.js';
import { FAST_DELIVERY, startEventSink, until, type EventSink } from '../helpers/event-sink.js';
import { connectH2, grpcFrame, h2Request } from '../helpers/h2-client.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import {
  eventsOf,
  jaegerMissing,
  newTraceparent,
  parentOf,
  parseTraceparent,
  startJaeger,
  tag,
  type Jaeger,
  type JaegerSpan,
} from '../helpers/jaeger.js';
import { needTool } from '../helpers/need-tool.js';
import { freePort, startArborProcess, type ArborProcess } from '../helpers/process.js';
import { makeClient, type Client } from '../helpers/server.js';

/**
 * OpenTelemetry tracing end to end: a real `arbor serve` (PGlite) exporting OTLP/HTTP to a
 * real Jaeger, whose query API is read back. Each request sends its own `traceparent`, so
 * the trace it must land in is known, and its server span must be that span's child.
 */
const maybe = needTool(test.serial, 'Jaeger all-in-one', jaegerMissing());
const TOKEN = 'e2e-tracing-admin-token-0123456789';

let jaeger: Jaeger;
let arbor: ArborProcess;
let sink: EventSink;
let admin: Client;
let metricsUrl: string;
let dataDir: string;

test.before(async () => {
  if (jaegerMissing() !== undefined) return;
  jaeger = await startJaeger();
  sink = await startEventSink('up');
  dataDir = mkdtempSync(join(tmpdir(), 'arbor-e2e-tracing-'));
  const metricsPort = await freePort();
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  arbor = await startArborProcess({
    ...FAST_DELIVERY,
    DATA_DIR: dataDir,
    ARBOR_ADMIN_TOKEN: TOKEN,
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    METRICS_PORT: String(metricsPort),
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlp,
    OTEL_SERVICE_NAME: 'arbor-e2e',
    // The test is the caller and is trusted: its traceparent decides, and a delivery joins
    // the trace of the request that caused it (by default it would only link it).
    ARBOR_TRACE_TRUST_PARENT: 'true',
    // Exported within 50 ms, so a test waits on Jaeger, not on the batch timer.
    OTEL_BSP_SCHEDULE_DELAY: '50',
  });
  admin = makeClient(arbor.url, TOKEN);
});
test.after.always(async () => {
  await arbor?.stop();
  await sink?.close();
  await jaeger?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** The trace's spans once `ready` holds for them (exports are batched: they come late). */
async function spansOf(
  traceId: string,
  ready: (spans: JaegerSpan[]) => boolean,
): Promise<JaegerSpan[]> {
  let last: JaegerSpan[] = [];
  try {
    return await until(
      `trace ${traceId} in Jaeger`,
      async () => {
        last = await jaeger.spans(traceId);
        return ready(last) ? last : undefined;
      },
      60_000,
      200,
    );
  } catch (e) {
    const seen = last.map((s) => `${s.operationName} ${s.spanID}<-${parentOf(s)}`).join('\n');
    throw new Error(`${(e as Error).message}; spans so far:\n${seen}\n${jaeger.logs()}`);
  }
}

const named = (spans: JaegerSpan[], name: string) => spans.find((s) => s.operationName === name);

/** POST with a traceparent and a request id; the answer's body. */
async function post(path: string, body: unknown, tp: string, requestId: string) {
  const r = await admin.raw(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', traceparent: tp, 'x-request-id': requestId },
    body: JSON.stringify(body),
  });
  return r;
}

/** The JSON log line the server wrote with `msg` and `requestId`. */
function logLine(msg: string, requestId: string): Record<string, unknown> | undefined {
  return arbor.lines().find((l) => l.msg === msg && l.requestId === requestId);
}

maybe(
  'tracing: a REST write and a fast-path Get are children of the caller, with their SQL',
  async (t) => {
    const tp = newTraceparent();
    const created = await post('/iam/v2beta1/groups', { name: 'traced' }, tp.header, 'rest-1');
    t.is(created.status, 200);
    const spans = await spansOf(
      tp.traceId,
      (s) =>
        named(s, 'POST /iam/v2beta1/groups') !== undefined &&
        s.some((x) => tag(x, 'db.system.name')),
    );
    const server = named(spans, 'POST /iam/v2beta1/groups')!;
    t.is(parentOf(server), tp.spanId, 'the incoming traceparent is the parent');
    t.is(tag(server, 'span.kind'), 'server');
    t.is(tag(server, 'http.request.method'), 'POST');
    t.is(tag(server, 'http.route'), '/iam/v2beta1/groups');
    t.is(tag(server, 'http.response.status_code'), 200);
    const sql = spans.filter((s) => tag(s, 'db.system.name') === 'postgresql');
    t.true(sql.length > 0, 'each statement has its span');
    for (const s of sql) {
      t.is(parentOf(s), server.spanID, `${s.operationName} is the request's child`);
      t.is(tag(s, 'span.kind'), 'client');
      t.regex(String(tag(s, 'db.query.text')), /\S/);
    }
    t.true(sql.some((s) => s.operationName === 'INSERT'));

    // The request's log line carries its request id and its trace id.
    const line = logLine('request', 'rest-1');
    t.truthy(line, 'the access log line');
    t.is(line?.traceId, tp.traceId);

    // A Get: the fast read path (HTTP/1.1, plain), the same span.
    const uid = (created.body as { uid: string }).uid;
    const tg = newTraceparent();
    const got = await admin.raw(`/iam/v2beta1/groups/${uid}`, {
      headers: { traceparent: tg.header, 'x-request-id': 'rest-get-1' },
    });
    t.is(got.status, 200);
    const getSpans = await spansOf(tg.traceId, (s) =>
      s.some((x) => x.operationName.startsWith('GET /iam/v2beta1/groups/')),
    );
    const get = getSpans.find((x) => x.operationName.startsWith('GET /iam/v2beta1/groups/'))!;
    t.is(parentOf(get), tg.spanId);
    t.is(tag(get, 'http.response.status_code'), 200);
    t.is(logLine('request', 'rest-get-1')?.traceId, tg.traceId);
  },
);

maybe(
  'tracing: gRPC calls, fast path and Connect, are RPC server spans under the caller',
  async (t) => {
    const org = await post(
      '/iam/v2beta1/groups',
      { name: 'grpc-traced' },
      newTraceparent().header,
      'g0',
    );
    const uid = (org.body as { uid: string }).uid;
    const session = await connectH2(arbor.url);
    try {
      const frame = grpcFrame(
        toBinary(GetGroupRequestSchema, create(GetGroupRequestSchema, { uid })),
      );
      const rpc = `${GroupsService.typeName}/GetGroup`;
      // Without a deadline the unary fast path answers; with one (grpc-timeout), Connect.
      for (const [requestId, extra] of [
        ['grpc-fast-1', {}],
        ['grpc-connect-1', { 'grpc-timeout': '30S' }],
      ] as const) {
        const tp = newTraceparent();
        const answer = await h2Request(
          session,
          {
            ':method': 'POST',
            ':path': `/${rpc}`,
            'content-type': 'application/grpc',
            te: 'trailers',
            authorization: `Bearer ${TOKEN}`,
            traceparent: tp.header,
            'x-request-id': requestId,
            ...extra,
          },
          frame,
        );
        t.is(answer.grpcStatus, 0, requestId);
        const spans = await spansOf(tp.traceId, (s) => named(s, rpc) !== undefined);
        const server = named(spans, rpc)!;
        t.is(parentOf(server), tp.spanId, `${requestId}: the incoming traceparent is the parent`);
        t.is(tag(server, 'span.kind'), 'server');
        t.is(tag(server, 'rpc.system'), 'grpc');
        t.is(tag(server, 'rpc.service'), GroupsService.typeName);
        t.is(tag(server, 'rpc.method'), 'GetGroup');
        t.is(tag(server, 'rpc.grpc.status_code'), 0);
        for (const s of spans.filter((x) => tag(x, 'db.system.name')))
          t.is(parentOf(s), server.spanID, `${requestId}: SQL under the call`);
        const line = logLine('rpc', requestId);
        t.truthy(line, `${requestId}: the call's log line`);
        t.is(line?.traceId, tp.traceId);
      }
    } finally {
      session.close();
    }
  },
);

maybe('tracing: a check shows its proof walk as events of its span', async (t) => {
  const org = await post(
    '/iam/v2beta1/groups',
    { name: 'check-traced' },
    newTraceparent().header,
    'c0',
  );
  const group = (org.body as { uid: string }).uid;
  const identity = await createIdentity(admin, group, 'checked');
  const viewer = BUILTIN_ROLES.find((r) => r.name === 'viewer')!.uid;
  await createBinding(admin, group, identity, viewer);
  const tp = newTraceparent();
  const r = await post(
    '/iam/v2beta1/access:check',
    { identityUid: identity, capability: 'groups.list', groupUid: group },
    tp.header,
    'check-1',
  );
  t.is(r.status, 200);
  t.true((r.body as { allowed: boolean }).allowed);
  const spans = await spansOf(tp.traceId, (s) =>
    s.some((x) => eventsOf(x).includes('access.decision')),
  );
  const server = spans.find((x) => eventsOf(x).includes('access.decision'))!;
  t.is(server.operationName, 'POST /iam/v2beta1/access:check');
  t.is(parentOf(server), tp.spanId);
  const events = eventsOf(server);
  t.deepEqual(
    events.filter((e) => e.startsWith('access.')),
    [
      'access.remembered',
      'access.authorized',
      'access.bindings',
      'access.proof',
      'access.decision',
    ],
    'the walk, step by step, in order',
  );
  const decision = server.logs.find((l) => l.fields.some((f) => f.value === 'access.decision'))!;
  t.true(decision.fields.some((f) => f.key === 'arbor.access.allowed' && f.value === true));
});

maybe(
  'tracing: a webhook delivery joins the trace of the request that made its event',
  async (t) => {
    const org = await post(
      '/iam/v2beta1/groups',
      { name: 'hook-traced' },
      newTraceparent().header,
      'w0',
    );
    const group = (org.body as { uid: string }).uid;
    const sub = await post(
      `/events/v2beta1/subscriptions/${group}`,
      { name: 'hook', sink: sink.url },
      newTraceparent().header,
      'w1',
    );
    t.is(sub.status, 200, JSON.stringify(sub.body));
    // The write whose event is followed: a child group, under the caller's traceparent.
    const origin = newTraceparent();
    const child = await post(`/iam/v2beta1/groups/${group}`, { name: 'made' }, origin.header, 'w2');
    t.is(child.status, 200, JSON.stringify(child.body));
    const childUid = (child.body as { uid: string }).uid;
    const delivered = await until('the child’s event at the sink', () =>
      sink.accepted().find((r) => r.body.subject === childUid),
    );
    const tp = parseTraceparent(delivered.headers.traceparent);
    t.truthy(tp, 'the delivery carries a traceparent');
    t.is(tp!.traceId, origin.traceId, "the sink's request continues the caller's trace");
    const spans = await spansOf(origin.traceId, (s) => {
      const request = s.find((x) => x.spanID === tp!.spanId);
      return request !== undefined && named(s, 'event send') !== undefined;
    });
    const server = spans.find(
      (x) => parentOf(x) === origin.spanId && tag(x, 'span.kind') === 'server',
    )!;
    t.truthy(server, 'the write is the caller’s child');
    const send = named(spans, 'event send')!;
    t.is(parentOf(send), server.spanID, 'the send is a child of the request that made the event');
    t.is(tag(send, 'span.kind'), 'producer');
    t.is(tag(send, 'cloudevents.event_subject'), childUid);
    const client = spans.find((x) => x.spanID === tp!.spanId)!;
    t.is(client.operationName, 'POST', 'the sink saw the client span of its own request');
    t.is(parentOf(client), send.spanID);
    t.is(tag(client, 'span.kind'), 'client');
    t.is(tag(client, 'http.request.method'), 'POST');
    t.is(tag(client, 'http.response.status_code'), 204);
    t.is(tag(client, 'url.full'), sink.url);

    // The drain that sent it is a trace of its own (claim, handshake, outbox writes),
    // linked from the send (Jaeger shows a link as a FOLLOWS_FROM reference).
    const link = send.references.find((r) => r.refType === 'FOLLOWS_FROM');
    t.truthy(link, 'the send links the drain');
    const drainSpans = await spansOf(
      link!.traceID,
      (s) => named(s, 'event delivery') !== undefined,
    );
    const delivery = named(drainSpans, 'event delivery')!;
    t.is(delivery.spanID, link!.spanID);
    t.is(parentOf(delivery), undefined, 'a background job starts its own trace');
    t.true(
      drainSpans.some((s) => tag(s, 'db.system.name') && parentOf(s) === delivery.spanID),
      'the outbox reads and writes are in it',
    );
    // The validation handshake went out in the first drain, with its own span there.
    const handshake = parseTraceparent(sink.handshakes[0]?.headers.traceparent);
    t.truthy(handshake, 'the handshake carries a traceparent');
  },
);

maybe('tracing: the latency histograms carry trace ids as exemplars (OpenMetrics)', async (t) => {
  const tp = newTraceparent();
  await post('/iam/v2beta1/groups', { name: 'exemplar' }, tp.header, 'e1');
  const r = await fetch(metricsUrl, { headers: { accept: 'application/openmetrics-text' } });
  t.regex(r.headers.get('content-type') ?? '', /openmetrics/);
  const text = await r.text();
  const ids = [
    ...text.matchAll(
      /^arbor_http_request_duration_seconds_bucket\{.*\} \d+ # \{trace_id="([0-9a-f]{32})"\}/gm,
    ),
  ].map((m) => m[1]);
  t.true(ids.length > 0, 'some bucket has an exemplar');
  t.true(ids.includes(tp.traceId), 'the last request of its series is its exemplar');
});
