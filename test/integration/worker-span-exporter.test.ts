import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { BasicTracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { WorkerSpanExporter } from '../../src/tracing/worker-span-exporter.js';

/**
 * The span exporter that sends from a worker thread, against a real OTLP/HTTP receiver on
 * loopback: what arrives is the SDK's protobuf request for the spans given, sent with the
 * headers and to the endpoint of the environment the exporter was given (not the test's
 * own), and a refusal comes back as a failed export.
 */
interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

async function receiver(status: number) {
  const got: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(status, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, got, close: () => server.close() };
}

/** Two ended spans of a tracer that no provider registered globally. */
function spans(): ReadableSpan[] {
  const tracer = new BasicTracerProvider().getTracer('worker-exporter-test');
  return ['first-span-name', 'second-span-name'].map((name) => {
    const s = tracer.startSpan(name, { attributes: { 'test.marker': `${name}-attribute` } });
    s.end();
    return s as unknown as ReadableSpan;
  });
}

const exported = (e: WorkerSpanExporter, s: ReadableSpan[]) =>
  new Promise<ExportResult>((resolve) => e.export(s, resolve));

test('worker span exporter: the spans reach the endpoint and headers of the environment it was given', async (t) => {
  const r = await receiver(200);
  const exporter = new WorkerSpanExporter({
    OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20collector-token',
  });
  try {
    const batch = spans();
    const result = await exported(exporter, batch);
    t.is(result.code, ExportResultCode.SUCCESS, String(result.error));
    t.is(r.got.length, 1);
    const [req] = r.got;
    t.is(req!.url, '/v1/traces');
    t.is(req!.headers['content-type'], 'application/x-protobuf');
    t.is(req!.headers.authorization, 'Bearer collector-token');
    for (const s of batch) {
      const { traceId, spanId } = s.spanContext();
      // Protobuf writes strings and bytes fields as they are: each span's name, attribute
      // and ids are in the request.
      t.true(req!.body.includes(Buffer.from(s.name)), s.name);
      t.true(req!.body.includes(Buffer.from(`${s.name}-attribute`)));
      t.true(req!.body.includes(Buffer.from(traceId, 'hex')));
      t.true(req!.body.includes(Buffer.from(spanId, 'hex')));
    }
    await t.notThrowsAsync(exporter.forceFlush());
  } finally {
    await exporter.shutdown();
    r.close();
  }
});

test('worker span exporter: a refused export fails, and after shutdown every export fails at once', async (t) => {
  const r = await receiver(400);
  const exporter = new WorkerSpanExporter({ OTEL_EXPORTER_OTLP_ENDPOINT: r.url });
  try {
    const refused = await exported(exporter, spans());
    t.is(refused.code, ExportResultCode.FAILED);
    t.is(r.got.length, 1, 'a 400 is not retried');
  } finally {
    await exporter.shutdown();
  }
  const late = await exported(exporter, spans());
  t.is(late.code, ExportResultCode.FAILED);
  t.regex(String(late.error), /shut down/);
  t.is(r.got.length, 1, 'nothing was sent after shutdown');
  r.close();
});
