/** What a PeriodicFlush writes, and whom it tells of a failure. */
export interface PeriodicFlushOptions {
  /** Whether anything waits to be written. */
  pending(): boolean;
  /** Write what waits (one batch); a failure is the writer's to put back. */
  write(): Promise<void>;
  intervalMs: number;
  /** A failed background or shutdown write: the batch is kept, the caller logs. */
  failed(err: unknown, atShutdown: boolean): void;
}

/**
 * The loop behind a background writer (last-used times, the issued-token record): one write
 * at a time, every `intervalMs` on an unref'd timer (a tick skipped while a write runs), on
 * demand (`flush` waits for one in flight first), and once more on `stop`.
 */
export class PeriodicFlush {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(private readonly o: PeriodicFlushOptions) {}

  /** Write what waits now (waits for a write in flight first). */
  async flush(): Promise<void> {
    while (this.#running) await this.#running;
    if (!this.o.pending()) return;
    this.#running = this.o.write().finally(() => (this.#running = undefined));
    await this.#running;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      if (this.#running) return;
      this.flush().catch((err: unknown) => this.o.failed(err, false));
    }, this.o.intervalMs);
    this.#timer.unref();
  }

  /** Stop the timer and write what is left (graceful shutdown). */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush().catch((err: unknown) => this.o.failed(err, true));
  }
}
