import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create, toBinary } from '@bufbuild/protobuf';
import test from 'ava';
import { GetGroupRequestSchema, GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { connectH2, grpcFrame, h2Request } from '../helpers/h2-client.js';
import { newTraceparent } from '../helpers/jaeger.js';
import { startArborProcess, type ArborProcess } from '../helpers/process.js';
import { until } from '../helpers/event-sink.js';

/**
 * Every log line of a request carries its request id (REST: Koa and the fast reads; gRPC:
 * the fast path and Connect) and, with tracing on, its trace id. The OTLP receiver here
 * only counts what it is sent (Jaeger's own test is tracing.test.ts): these tests need no tool.
 */
const TOKEN = 'e2e-logs-admin-token-0123456789ab';

interface Calls {
  /** request id → the traceparent's trace id it was sent with */
  sent: Map<string, string>;
}

/** One of each door's paths, each with its own request id and traceparent. */
async function callEveryPath(a: ArborProcess, prefix: string): Promise<Calls> {
  const sent = new Map<string, string>();
  const headers = (id: string) => {
    const tp = newTraceparent();
    sent.set(id, tp.traceId);
    return { authorization: `Bearer ${TOKEN}`, 'x-request-id': id, traceparent: tp.header };
  };
  const created = await fetch(`${a.url}/iam/v2beta1/groups`, {
    method: 'POST',
    headers: { ...headers(`${prefix}-koa`), 'content-type': 'application/json' },
    body: JSON.stringify({ name: `${prefix}-logs` }),
  });
  const { uid } = (await created.json()) as { uid: string };
  await fetch(`${a.url}/iam/v2beta1/groups/${uid}`, { headers: headers(`${prefix}-fast`) });
  const session = await connectH2(a.url);
  try {
    const frame = grpcFrame(
      toBinary(GetGroupRequestSchema, create(GetGroupRequestSchema, { uid })),
    );
    for (const [id, extra] of [
      [`${prefix}-grpc-fast`, {}],
      [`${prefix}-grpc-connect`, { 'grpc-timeout': '30S' }],
    ] as const)
      await h2Request(
        session,
        {
          ':method': 'POST',
          ':path': `/${GroupsService.typeName}/GetGroup`,
          'content-type': 'application/grpc',
          te: 'trailers',
          ...headers(id),
          ...extra,
        },
        frame,
      );
  } finally {
    session.close();
  }
  return { sent };
}

/** The line each request id logged (its access or call line), once all are there. */
async function linesOf(a: ArborProcess, calls: Calls) {
  return until('every request logged', () => {
    const found = [...calls.sent.keys()].map((id) =>
      a.lines().find((l) => l.requestId === id && (l.msg === 'request' || l.msg === 'rpc')),
    );
    return found.every((l) => l !== undefined) ? found : undefined;
  });
}

function serve(dataDir: string, env: Record<string, string> = {}) {
  return startArborProcess({
    DATA_DIR: dataDir,
    ARBOR_ADMIN_TOKEN: TOKEN,
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
    ...env,
  });
}

test.serial(
  'logs: without tracing, every request line of every door carries its request id',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'arbor-e2e-logs-'));
    const a = await serve(dir);
    try {
      const calls = await callEveryPath(a, 'off');
      const lines = await linesOf(a, calls);
      t.is(lines.length, 4);
      for (const l of lines) t.is(l!.traceId, undefined, `${String(l!.requestId)}: no trace`);
    } finally {
      await a.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test.serial(
  'logs: with tracing, every request line carries its request id and trace id',
  async (t) => {
    let posts = 0;
    const receiver: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/v1/traces') posts++;
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const dir = mkdtempSync(join(tmpdir(), 'arbor-e2e-logs-'));
    const a = await serve(dir, {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
      OTEL_BSP_SCHEDULE_DELAY: '50',
    });
    try {
      const calls = await callEveryPath(a, 'on');
      const lines = await linesOf(a, calls);
      for (const l of lines) {
        const id = String(l!.requestId);
        t.is(l!.traceId, calls.sent.get(id), `${id}: the trace its traceparent named`);
        t.regex(String(l!.spanId), /^[0-9a-f]{16}$/, `${id}: its server span`);
      }
      // Lines the process writes outside any request carry neither.
      const startup = a.lines().find((l) => l.msg === 'tracing on');
      t.truthy(startup);
      t.is(startup?.traceId, undefined);
      await until('spans exported over OTLP/HTTP', () => posts > 0);
      t.pass();
    } finally {
      await a.stop();
      receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test.serial(
  'logs: a fast read the sampler drops still logs its trace id, though it makes no span',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'arbor-e2e-logs-'));
    // Nothing is sampled, so nothing is exported: the endpoint is never called.
    const a = await serve(dir, {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_TRACES_SAMPLER: 'parentbased_always_off',
    });
    try {
      const auth = { authorization: `Bearer ${TOKEN}` };
      const created = await fetch(`${a.url}/iam/v2beta1/groups`, {
        method: 'POST',
        headers: { ...auth, 'x-request-id': 'drop-koa', 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'dropped-logs' }),
      });
      const { uid } = (await created.json()) as { uid: string };
      for (const id of ['drop-fast-1', 'drop-fast-2'])
        t.is(
          (
            await fetch(`${a.url}/iam/v2beta1/groups/${uid}`, {
              headers: { ...auth, 'x-request-id': id },
            })
          ).status,
          200,
        );
      const lines = await until('every request logged', () => {
        const found = ['drop-koa', 'drop-fast-1', 'drop-fast-2'].map((id) =>
          a.lines().find((l) => l.requestId === id && l.msg === 'request'),
        );
        return found.every((l) => l !== undefined) ? found : undefined;
      });
      for (const l of lines) {
        t.regex(String(l!.traceId), /^[0-9a-f]{32}$/, `${String(l!.requestId)}: its trace id`);
        t.regex(String(l!.spanId), /^[0-9a-f]{16}$/, `${String(l!.requestId)}: its span id`);
      }
      t.not(lines[1]!.traceId, lines[2]!.traceId, 'each request a trace of its own');
    } finally {
      await a.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
