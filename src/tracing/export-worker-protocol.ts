/**
 * What the main thread and the span export worker (otlp-export-worker.ts) say to each
 * other: one request, one answer with the same `id`.
 */
export type ToExportWorker =
  /** One batch of spans, already the OTLP protobuf request's bytes. */
  | { kind: 'export'; id: number; bytes: Uint8Array; spans: number }
  /** Answer once every export sent so far has ended. */
  | { kind: 'flush'; id: number }
  /** Flush, shut the exporter down, then answer. */
  | { kind: 'shutdown'; id: number };

/** The answer to one request: `error` is the exporter's message when it failed. */
export interface FromExportWorker {
  id: number;
  ok: boolean;
  error?: string;
}
