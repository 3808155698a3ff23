import type { IssuedTokenRecorder } from '../../auth/issued-token-recorder.js';
import { PeriodicFlush } from '../../core/periodic-flush.js';
import type { UnitOfWork } from '../tx.js';
import type { IssuedTokenStore } from './issued-token.js';

/** How often recorded tokens are written, by default. */
const ISSUED_FLUSH_MS = 1_000;
/** Expired rows deleted per flush, at least (and at least twice what the flush wrote). */
const MIN_SWEEP = 1_000;

export interface IssuedTokenFlusherDeps {
  uow: UnitOfWork;
  store: IssuedTokenStore;
  recorder: IssuedTokenRecorder;
  intervalMs?: number;
  log?: { warn(o: object, msg: string): void };
}

/**
 * Writes what the IssuedTokenRecorder gathered, off the request path: every `intervalMs`
 * (one second), when a list asks (so a process lists what it issued itself at once), and
 * on `stop`. Each write also deletes expired rows, at least twice as many as it wrote and
 * at least MIN_SWEEP, so the table holds about the tokens of the last hour however fast
 * they are issued. Concurrent flushes from several processes commute (a jti again is a
 * no-op). A failed write puts its batch back, within the recorder's bound.
 */
export class IssuedTokenFlusher {
  readonly stats = { flushes: 0, failures: 0, swept: 0 };
  readonly #loop: PeriodicFlush;

  constructor(private readonly d: IssuedTokenFlusherDeps) {
    this.#loop = new PeriodicFlush({
      pending: () => d.recorder.pending > 0,
      write: () => this.#write(),
      intervalMs: d.intervalMs ?? ISSUED_FLUSH_MS,
      failed: (err, atShutdown) =>
        d.log?.warn(
          { err },
          atShutdown
            ? 'issued-token record flush on shutdown failed'
            : 'issued-token record flush failed',
        ),
    });
  }

  get recorder(): IssuedTokenRecorder {
    return this.d.recorder;
  }

  /** Write what was recorded now (waits for a flush in flight first). */
  flush(): Promise<void> {
    return this.#loop.flush();
  }

  async #write(): Promise<void> {
    const batch = this.d.recorder.drain();
    try {
      const swept = await this.d.uow.run(
        async (tx) => {
          await this.d.store.record(tx, batch);
          return this.d.store.sweep(tx, Math.max(MIN_SWEEP, 2 * batch.length));
        },
        { uncached: true },
      );
      this.stats.flushes++;
      this.stats.swept += swept;
    } catch (e) {
      this.stats.failures++;
      this.d.recorder.restore(batch);
      throw e;
    }
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }
}
