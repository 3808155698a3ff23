import type { UsageBatch, UsageRecorder } from '../../auth/usage-recorder.js';
import { PeriodicFlush } from '../../core/periodic-flush.js';
import type { Tx, UnitOfWork } from '../tx.js';

/** Where last-used times are written (db/stores/usage-store.ts). */
export interface UsageWriter {
  /**
   * Write a batch in one statement per kind: a time never moves backwards nor by less than
   * the batch's resolution, and uids that no longer exist (a binding deleted since its use)
   * are skipped.
   */
  record(tx: Tx, batch: UsageBatch): Promise<void>;
}

export interface UsageFlusherDeps {
  uow: UnitOfWork;
  writer: UsageWriter;
  recorder: UsageRecorder;
  /** How often to write what was recorded (ARBOR_LAST_USED_FLUSH_MS). */
  intervalMs: number;
  /**
   * The recorder's clock, kept coarse while the flusher runs (core/coarse-clock.ts): started
   * with it and stopped with it, so that no timer outlives a composed Arbor.
   */
  clock?: { start(): void; stop(): void };
  log?: { warn(o: object, msg: string): void };
}

/**
 * Writes what the `UsageRecorder` gathered, off the request path: every `intervalMs`, and
 * once more on `stop` (graceful shutdown). Every process flushes its own recorder through
 * the unit of work's primary pool: a worker of `serve-cluster`, or a process that serves
 * reads from a replica, writes to the primary, never to a replica. Concurrent flushes from
 * several processes commute (the latest time wins), so they need no coordination.
 *
 * A failed write puts its batch back for the next flush; a crash loses what was recorded
 * since the last flush (at most `intervalMs`), and never a grant: nothing here decides access.
 */
export class UsageFlusher {
  /**
   * `lastWritten`: the latest use (epoch ms) the last successful flush wrote; what a crash
   * would lose is what was recorded after it.
   */
  readonly stats = { flushes: 0, failures: 0, lastWritten: 0 };
  readonly #loop: PeriodicFlush;

  constructor(private readonly d: UsageFlusherDeps) {
    this.#loop = new PeriodicFlush({
      pending: () => d.recorder.pending,
      write: () => this.#write(),
      intervalMs: d.intervalMs,
      failed: (err, atShutdown) =>
        d.log?.warn(
          { err },
          atShutdown ? 'last-used flush on shutdown failed' : 'last-used flush failed',
        ),
    });
  }

  /** Write what was recorded now (waits for a flush in flight first). */
  flush(): Promise<void> {
    return this.#loop.flush();
  }

  async #write(): Promise<void> {
    const batch = this.d.recorder.drain();
    try {
      // Nothing a read cache holds: the caches keep serving through a flush.
      await this.d.uow.run((tx) => this.d.writer.record(tx, batch), { uncached: true });
      this.stats.flushes++;
      this.d.recorder.written(batch);
      for (const m of [batch.bindings, batch.identities])
        for (const at of m.values()) if (at > this.stats.lastWritten) this.stats.lastWritten = at;
    } catch (e) {
      this.stats.failures++;
      this.d.recorder.restore(batch);
      throw e;
    }
  }

  start(): void {
    this.d.clock?.start();
    this.#loop.start();
  }

  /** Stop the timer and write what is left (graceful shutdown). */
  async stop(): Promise<void> {
    this.d.clock?.stop();
    await this.#loop.stop();
  }
}
