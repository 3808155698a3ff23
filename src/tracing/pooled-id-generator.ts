import { randomBytes } from 'node:crypto';
import type { IdGenerator } from '@opentelemetry/sdk-trace-node';

/** Random bytes a pool draws at a time: 512 trace ids, or 1024 span ids. */
const POOL_BYTES = 8192;
const ZERO = /^0+$/;

/** A run of random lowercase hex that ids are cut from, in order. */
class HexPool {
  #hex = '';
  #at = 0;

  /** The next valid id of `chars` characters, left in the pool. */
  peek(chars: number): string {
    for (;;) {
      if (this.#at + chars > this.#hex.length) {
        this.#hex = randomBytes(POOL_BYTES).toString('hex');
        this.#at = 0;
      }
      const id = this.#hex.slice(this.#at, this.#at + chars);
      if (id.charCodeAt(0) !== 48 || !ZERO.test(id)) return id;
      this.#at += chars;
    }
  }

  take(chars: number): string {
    const id = this.peek(chars);
    this.#at += chars;
    return id;
  }
}

/**
 * Trace and span ids cut from pools of random hex, for the SDK's `idGenerator`. The SDK's
 * own generator draws Math.random four bytes at a time and hex-encodes each id through a
 * Buffer: a quarter of what an unsampled request's span costs, and every request has one.
 * Here the bytes come from the CSPRNG a pool at a time, are hex-encoded once, and each id
 * is a slice of that text. An all-zero id (invalid in W3C trace context) is never handed out.
 *
 * Trace ids and span ids come from separate pools so that `peekTraceId` names the trace id
 * the next root span will get, whatever span ids are drawn first (the SDK draws a span's
 * id before its trace id): the door's sampling decision is taken on it (spans.ts).
 */
export class PooledIdGenerator implements IdGenerator {
  readonly #traces = new HexPool();
  readonly #spans = new HexPool();

  generateTraceId(): string {
    return this.#traces.take(32);
  }

  generateSpanId(): string {
    return this.#spans.take(16);
  }

  /** The trace id `generateTraceId` hands out next. */
  peekTraceId(): string {
    return this.#traces.peek(32);
  }
}
