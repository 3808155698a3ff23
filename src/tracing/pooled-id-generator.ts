import { randomBytes } from 'node:crypto';
import { TraceFlags, type SpanContext } from '@opentelemetry/api';
import type { IdGenerator } from '@opentelemetry/sdk-trace-node';

/** Random bytes a pool draws at a time: 512 trace ids, or 1024 span ids. */
const POOL_BYTES = 8192;

/** Random bytes that ids are cut from, in order, with their lowercase hex made once. */
class HexPool {
  #bytes = Buffer.alloc(0);
  #hex = '';
  /** Where the next id starts, in bytes. */
  #at = 0;

  /** Where the next valid id of `n` bytes starts (an all-zero one is skipped), left in the pool. */
  #next(n: number): number {
    for (;;) {
      if (this.#at + n > this.#bytes.length) {
        this.#bytes = randomBytes(POOL_BYTES);
        this.#hex = this.#bytes.toString('hex');
        this.#at = 0;
      }
      for (let i = this.#at; i < this.#at + n; i++) if (this.#bytes[i] !== 0) return this.#at;
      this.#at += n;
    }
  }

  /** The next valid id of `n` bytes as hex, left in the pool. */
  peek(n: number): string {
    const at = this.#next(n);
    return this.#hex.slice(2 * at, 2 * (at + n));
  }

  take(n: number): string {
    const id = this.peek(n);
    this.#at += n;
    return id;
  }

  /**
   * The next valid id of `n` bytes (a multiple of 4), left in the pool, read as the SDK's
   * trace-id ratio sampler reads an id: its 32-bit big-endian words XORed, unsigned.
   */
  peekWords(n: number): number {
    const at = this.#next(n);
    let x = 0;
    for (let i = at; i < at + n; i += 4) x = (x ^ this.#bytes.readUInt32BE(i)) >>> 0;
    return x;
  }

  /** The next valid id of `n` bytes, taken: where it starts in `hex` (until the next take). */
  takeAt(n: number): number {
    const at = this.#next(n);
    this.#at += n;
    return 2 * at;
  }

  /** The pool's text. */
  get hex(): string {
    return this.#hex;
  }
}

/**
 * The span context of a root that is not sampled, its ids sliced from their pools' text
 * only when read: no span, log or header of such a request reads them unless a line is
 * logged for it.
 */
class UnsampledRootContext implements SpanContext {
  readonly traceFlags = TraceFlags.NONE;

  constructor(
    private readonly traceHex: string,
    private readonly traceAt: number,
    private readonly spanHex: string,
    private readonly spanAt: number,
  ) {}

  get traceId(): string {
    return this.traceHex.slice(this.traceAt, this.traceAt + 32);
  }

  get spanId(): string {
    return this.spanHex.slice(this.spanAt, this.spanAt + 16);
  }
}

/**
 * Trace and span ids cut from pools of random bytes, for the SDK's `idGenerator`. The SDK's
 * own generator draws Math.random four bytes at a time and hex-encodes each id through a
 * Buffer: a quarter of what an unsampled request's span costs, and every request has one.
 * Here the bytes come from the CSPRNG a pool at a time, are hex-encoded once, and each id
 * is a slice of that text. An all-zero id (invalid in W3C trace context) is never handed out.
 *
 * Trace ids and span ids come from separate pools so that the next root span's trace id is
 * known whatever span ids are drawn first (the SDK draws a span's id before its trace id):
 * the doors decide a new root on it (unsampled-root.ts), and a root they drop takes its ids
 * without making their text, which only a log line ever asks for.
 */
export class PooledIdGenerator implements IdGenerator {
  readonly #traces = new HexPool();
  readonly #spans = new HexPool();

  generateTraceId(): string {
    return this.#traces.take(16);
  }

  generateSpanId(): string {
    return this.#spans.take(8);
  }

  /** The trace id `generateTraceId` hands out next. */
  peekTraceId(): string {
    return this.#traces.peek(16);
  }

  /**
   * The trace id `generateTraceId` hands out next, as the trace-id ratio sampler reads it
   * (the XOR of its four 32-bit words), read from its bytes.
   */
  nextTraceIdWord(): number {
    return this.#traces.peekWords(16);
  }

  /**
   * The next trace id and a span id, taken for a root that is not sampled, as its span
   * context (each id made into text when read).
   */
  takeUnsampledRoot(): SpanContext {
    const traceAt = this.#traces.takeAt(16);
    const spanAt = this.#spans.takeAt(8);
    return new UnsampledRootContext(this.#traces.hex, traceAt, this.#spans.hex, spanAt);
  }
}
