import { randomBytes } from 'node:crypto';
import type { IdGenerator } from '@opentelemetry/sdk-trace-node';

/** Random bytes drawn at a time: 512 trace ids, or 1024 span ids. */
const POOL_BYTES = 8192;
const ZERO = /^0+$/;

/**
 * Trace and span ids cut from a pool of random hex, for the SDK's `idGenerator`. The SDK's
 * own generator draws Math.random four bytes at a time and hex-encodes each id through a
 * Buffer: a quarter of what an unsampled request's span costs, and every request has one.
 * Here the bytes come from the CSPRNG a pool at a time, are hex-encoded once, and each id
 * is a slice of that text. An all-zero id (invalid in W3C trace context) is never handed out.
 */
export class PooledIdGenerator implements IdGenerator {
  #hex = '';
  #at = 0;

  generateTraceId(): string {
    return this.take(32);
  }

  generateSpanId(): string {
    return this.take(16);
  }

  private take(chars: number): string {
    for (;;) {
      if (this.#at + chars > this.#hex.length) {
        this.#hex = randomBytes(POOL_BYTES).toString('hex');
        this.#at = 0;
      }
      const id = this.#hex.slice(this.#at, (this.#at += chars));
      if (id.charCodeAt(0) !== 48 || !ZERO.test(id)) return id;
    }
  }
}
