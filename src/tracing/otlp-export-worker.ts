import { parentPort } from 'node:worker_threads';
import { ExportResultCode } from '@opentelemetry/core';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import {
  convertLegacyHttpOptions,
  createOtlpHttpExportDelegate,
} from '@opentelemetry/otlp-exporter-base/node-http';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { FromExportWorker, ToExportWorker } from './export-worker-protocol.js';

/**
 * The span export worker (worker-span-exporter.ts starts it): the SDK's own OTLP/HTTP export
 * delegate (its configuration from the OTEL_EXPORTER_OTLP_* variables, its HTTP transport,
 * retries, timeout and bounded queue), sending batches the main thread has already encoded
 * with the SDK's protobuf serializer. The delegate is built as the SDK's
 * `OTLPTraceExporter` builds it; only its serializer hands the bytes on as they are.
 */
interface Batch {
  bytes: Uint8Array;
  spans: number;
}

const exporter = new OTLPExporterBase<Batch>(
  createOtlpHttpExportDelegate(
    convertLegacyHttpOptions({}, 'TRACES', 'v1/traces', {
      'Content-Type': 'application/x-protobuf',
    }),
    {
      serializeRequest: (b: Batch) => b.bytes,
      deserializeResponse: (d: Uint8Array) => ProtobufTraceSerializer.deserializeResponse(d),
    },
    'otlp_http_span_exporter',
    { name: 'span', countItems: (b: Batch) => b.spans },
    undefined,
  ),
);

const port = parentPort;
if (port === null) throw new Error('otlp-export-worker runs as a worker thread only');

/** What the main thread is told of a failure: the message only (no stack, no object). */
const reason = (e: unknown): string => (e instanceof Error ? e.message : 'export failed');

const answer = (id: number, error?: unknown) =>
  port.postMessage({
    id,
    ok: error === undefined,
    ...(error === undefined ? {} : { error: reason(error) }),
  } satisfies FromExportWorker);

/** Answers `id` once `p` settles, with its failure if it fails. */
const settle = (id: number, p: Promise<void>): void => {
  // Both outcomes are handled: the promise this makes cannot reject.
  void p.then(
    () => answer(id),
    (e: unknown) => answer(id, e),
  );
};

port.on('message', (m: ToExportWorker) => {
  switch (m.kind) {
    case 'export':
      exporter.export({ bytes: m.bytes, spans: m.spans }, (r) =>
        answer(
          m.id,
          r.code === ExportResultCode.SUCCESS ? undefined : (r.error ?? new Error('export failed')),
        ),
      );
      return;
    case 'flush':
      settle(m.id, exporter.forceFlush());
      return;
    case 'shutdown':
      settle(m.id, exporter.shutdown());
      return;
  }
});
