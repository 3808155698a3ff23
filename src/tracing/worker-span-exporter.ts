import { Worker } from 'node:worker_threads';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { FromExportWorker, ToExportWorker } from './export-worker-protocol.js';

/** Whether this module runs from its TypeScript source (under tsx: the tests, `npm run dev`). */
const SOURCE = import.meta.url.endsWith('.ts');
/** The worker's module beside this one. */
const WORKER = new URL(`./otlp-export-worker.${SOURCE ? 'ts' : 'js'}`, import.meta.url);

/**
 * The export worker. From the sources, the worker registers tsx itself before loading its
 * module: Node 20 does not hand a `--import` loader on to worker threads.
 */
function startWorker(env: NodeJS.ProcessEnv): Worker {
  if (!SOURCE) return new Worker(WORKER, { env });
  const load = `import('tsx/esm/api').then((t) => { t.register(); return import(${JSON.stringify(WORKER.href)}); });`;
  return new Worker(load, { eval: true, env });
}

/** A request before `#ask` numbers it (each kind of the union without its `id`). */
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;
type Request = WithoutId<ToExportWorker>;

/**
 * OTLP/HTTP span export with the sending on a worker thread. The batch processor hands a
 * batch here on the main thread; it is encoded there with the SDK's protobuf serializer
 * (the spans are objects of this thread), and the bytes go to otlp-export-worker.ts, which
 * sends them with the SDK's HTTP export delegate.
 *
 * Why a worker: with the export in the request thread, a server traced at 1 % lost 15 % of
 * a cached Get's throughput on the bench, and without the export (spans made, batched and
 * dropped) 9 %. The cost was not the few exports themselves but what they leave behind: the
 * HTTP client runs through the same `node:http`, stream and socket functions as the server's
 * responses, whose optimised code then serves two kinds of object (BENCHMARKS.md, 2026-11-28).
 * In a worker, the sending has an isolate, a heap and an event loop of its own.
 *
 * The worker keeps the process alive only while an answer is awaited, so that a shutdown's
 * last flush is sent and an idle exporter never holds the process open.
 */
export class WorkerSpanExporter implements SpanExporter {
  readonly #worker: Worker;
  readonly #waiting = new Map<number, (a: FromExportWorker) => void>();
  #next = 0;
  #gone: string | undefined;

  /** `env`: the variables the worker's exporter reads (OTEL_EXPORTER_OTLP_*); the worker gets a copy. */
  constructor(env: NodeJS.ProcessEnv) {
    this.#worker = startWorker(env);
    this.#worker.unref();
    this.#worker.on('message', (a: FromExportWorker) => {
      const done = this.#waiting.get(a.id);
      this.#waiting.delete(a.id);
      if (this.#waiting.size === 0) this.#worker.unref();
      done?.(a);
    });
    this.#worker.on('error', (e) => this.#end(`span export worker failed: ${e.message}`));
    this.#worker.on('exit', () => this.#end('span export worker exited'));
  }

  export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
    const failed = (error: Error) => done({ code: ExportResultCode.FAILED, error });
    let bytes: Uint8Array | undefined;
    try {
      bytes = ProtobufTraceSerializer.serializeRequest(spans);
    } catch (e) {
      return failed(e as Error);
    }
    if (bytes === undefined) return failed(new Error('spans could not be encoded'));
    // #ask never rejects: a worker that is gone answers as a failure.
    void this.#ask({ kind: 'export', bytes, spans: spans.length }).then((a) =>
      a.ok ? done({ code: ExportResultCode.SUCCESS }) : failed(new Error(a.error)),
    );
  }

  async forceFlush(): Promise<void> {
    const a = await this.#ask({ kind: 'flush' });
    if (!a.ok) throw new Error(a.error);
  }

  async shutdown(): Promise<void> {
    if (this.#gone !== undefined) return;
    await this.#ask({ kind: 'shutdown' });
    this.#gone = 'span exporter shut down';
    await this.#worker.terminate();
  }

  /** The worker's answer to `r`; a failed one at once when the worker is gone. */
  #ask(r: Request): Promise<FromExportWorker> {
    const id = this.#next++;
    if (this.#gone !== undefined) return Promise.resolve({ id, ok: false, error: this.#gone });
    return new Promise((resolve) => {
      if (this.#waiting.size === 0) this.#worker.ref();
      this.#waiting.set(id, resolve);
      this.#worker.postMessage({ ...r, id } as ToExportWorker);
    });
  }

  /** The worker is gone: every awaited answer is a failure, and so is every later ask. */
  #end(why: string): void {
    this.#gone ??= why;
    for (const [id, done] of this.#waiting) done({ id, ok: false, error: this.#gone });
    this.#waiting.clear();
  }
}
