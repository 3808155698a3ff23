/**
 * One readiness result shared by every health Watch stream: while anyone watches, `probe`
 * runs once per interval (never two at once), and each watcher hears when the result
 * changes. Nobody watching, nothing runs; the first watcher starts a fresh probe.
 */
export class SharedReadiness<S> {
  private current: S | undefined;
  private watchers = 0;
  private readonly listeners = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<S> | undefined;

  constructor(
    private readonly probe: () => Promise<S>,
    private readonly intervalMs: number,
  ) {}

  /** A probe now, for Check: shared with any probe already under way. */
  check(): Promise<S> {
    this.running ??= this.probe().then(
      (s) => {
        this.running = undefined;
        this.current = s;
        return s;
      },
      (e: unknown) => {
        this.running = undefined;
        throw e;
      },
    );
    return this.running;
  }

  /** The result, then each change of it, until `signal` aborts. */
  async *changes(signal: AbortSignal): AsyncGenerator<S> {
    if (++this.watchers === 1) void this.tick();
    try {
      let last: S | undefined;
      while (!signal.aborted) {
        const now = this.current;
        if (now !== undefined && now !== last) {
          last = now;
          yield now;
        } else await this.changed(signal);
      }
    } finally {
      if (--this.watchers === 0) {
        clearTimeout(this.timer);
        this.timer = undefined;
        // A stale result must not greet the next watcher as if it were fresh.
        this.current = undefined;
      }
    }
  }

  private changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.listeners.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.listeners.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private async tick(): Promise<void> {
    let now: S | undefined;
    try {
      now = await this.check();
    } catch {
      now = undefined; // the probe's own failure is its answer; try again next time
    }
    if (this.watchers === 0) return;
    if (now !== undefined) for (const l of [...this.listeners]) l();
    if (this.timer === undefined)
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.tick();
      }, this.intervalMs).unref();
  }
}
