/**
 * The reconciler's work queue: one entry per object key, never one per event.
 *
 * - Coalescing: adding a key that is already waiting is a no-op, so a burst of watch
 *   events for one object costs one reconcile.
 * - At most one reconcile per key at a time: a key added while its reconcile runs is
 *   marked dirty and runs once more afterwards (the newer state must be seen).
 * - Per-key capped exponential backoff for failures (200 ms → 5 min by default), reset
 *   when a reconcile succeeds.
 * - A global token bucket in front of every reconcile: whatever a handler returns, the
 *   queue never runs more than `ratePerSecond` reconciles a second after the burst, so a
 *   bug that requeues forever is a slow leak, not a hot loop against the database.
 *
 * Time comes from an injectable clock so the unit tests drive it by hand.
 */

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** What a reconcile asks of the queue afterwards. */
export type Outcome =
  /** Converged (or nothing more can be done until the object changes): forget failures. */
  | { kind: 'done' }
  /** Failed or waiting on something: run again after this key's next backoff step. */
  | { kind: 'retry' }
  /** Run again after a fixed delay (not a failure; backoff is reset). */
  | { kind: 'after'; delayMs: number };

export const DONE: Outcome = Object.freeze({ kind: 'done' });
export const RETRY: Outcome = Object.freeze({ kind: 'retry' });

/** What the queue reports as it works (metrics); every hook optional. */
export interface WorkQueueObserver {
  /** A key went onto the ready list. */
  added?(key: string): void;
  /** The ready list's length changed. */
  depth?(n: number): void;
  /** A key was put back with backoff after a failure. */
  retried?(key: string): void;
  /** A reconcile ended: its outcome, or 'error' when it threw. */
  done?(key: string, outcome: Outcome | 'error', seconds: number): void;
}

export interface WorkQueueOptions {
  /** Reconciles one key; a throw counts as `retry`. */
  process: (key: string) => Promise<Outcome>;
  onError?: (key: string, error: unknown) => void;
  observer?: WorkQueueObserver;
  concurrency?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  ratePerSecond?: number;
  burst?: number;
  clock?: Clock;
}

/** A token bucket: `burst` tokens, refilled at `ratePerSecond`. */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.last = now;
  }

  private refill(now: number): void {
    const elapsed = Math.max(0, now - this.last);
    this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.ratePerSecond) / 1000);
    this.last = now;
  }

  /** Take one token if there is one. */
  take(now: number): boolean {
    this.refill(now);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Milliseconds until a token is available (0 if one is). */
  waitMs(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 1000) / this.ratePerSecond);
  }
}

export class WorkQueue {
  private readonly ready: string[] = [];
  private readonly queued = new Set<string>();
  private readonly inFlight = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly delayed = new Map<string, { at: number; handle: unknown }>();
  private readonly failures = new Map<string, number>();
  private readonly bucket: TokenBucket;
  private readonly clock: Clock;
  private readonly concurrency: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private pumpHandle: unknown;
  private running = false;
  private pumpQueued = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly opts: WorkQueueOptions) {
    this.clock = opts.clock ?? realClock;
    this.concurrency = Math.max(1, opts.concurrency ?? 4);
    this.baseDelayMs = Math.max(1, opts.baseDelayMs ?? 200);
    this.maxDelayMs = Math.max(this.baseDelayMs, opts.maxDelayMs ?? 300_000);
    this.bucket = new TokenBucket(opts.ratePerSecond ?? 20, opts.burst ?? 100, this.clock.now());
  }

  /** Begin handing keys to `process`; keys added before start wait. */
  start(): void {
    this.running = true;
    this.pump();
  }

  /** Stop taking new work and cancel timers; resolves when in-flight reconciles finish. */
  async stop(): Promise<void> {
    this.running = false;
    for (const { handle } of this.delayed.values()) this.clock.clearTimeout(handle);
    this.delayed.clear();
    if (this.pumpHandle !== undefined) this.clock.clearTimeout(this.pumpHandle);
    this.pumpHandle = undefined;
    this.ready.length = 0;
    this.opts.observer?.depth?.(0);
    this.queued.clear();
    this.dirty.clear();
    if (this.inFlight.size > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
  }

  /** Reconcile `key` as soon as a worker and a token are free. */
  add(key: string): void {
    const d = this.delayed.get(key);
    if (d) {
      this.clock.clearTimeout(d.handle);
      this.delayed.delete(key);
    }
    if (this.inFlight.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.ready.push(key);
    this.opts.observer?.added?.(key);
    this.opts.observer?.depth?.(this.ready.length);
    this.schedulePump();
  }

  /** Reconcile `key` after `delayMs`, unless something brings it forward. */
  addAfter(key: string, delayMs: number): void {
    if (delayMs <= 0) return this.add(key);
    if (this.queued.has(key) || this.dirty.has(key)) return;
    const at = this.clock.now() + delayMs;
    const existing = this.delayed.get(key);
    if (existing && existing.at <= at) return;
    if (existing) this.clock.clearTimeout(existing.handle);
    const handle = this.clock.setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, delayMs);
    this.delayed.set(key, { at, handle });
  }

  /** The delay before the `n`th retry (n ≥ 1): base·2^(n-1), capped. */
  backoffMs(n: number): number {
    return Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** Math.min(30, n - 1));
  }

  /** How many times in a row `key` has failed. */
  failureCount(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Drop a key's backoff history (the object is gone). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  get size(): { ready: number; inFlight: number; delayed: number } {
    return { ready: this.ready.length, inFlight: this.inFlight.size, delayed: this.delayed.size };
  }

  /**
   * Start work on the next microtask rather than inside `add`, so that a synchronous
   * burst of adds for one key (an informer relist) coalesces before the key is taken.
   */
  private schedulePump(): void {
    if (this.pumpQueued) return;
    this.pumpQueued = true;
    queueMicrotask(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  private pump(): void {
    if (!this.running) return;
    while (this.inFlight.size < this.concurrency && this.ready.length > 0) {
      const now = this.clock.now();
      if (!this.bucket.take(now)) {
        if (this.pumpHandle === undefined) {
          this.pumpHandle = this.clock.setTimeout(() => {
            this.pumpHandle = undefined;
            this.pump();
          }, this.bucket.waitMs(now));
        }
        return;
      }
      const key = this.ready.shift()!;
      this.opts.observer?.depth?.(this.ready.length);
      this.queued.delete(key);
      this.inFlight.add(key);
      void this.run(key);
    }
  }

  private async run(key: string): Promise<void> {
    let outcome: Outcome;
    const started = this.clock.now();
    try {
      outcome = await this.opts.process(key);
      this.opts.observer?.done?.(key, outcome, (this.clock.now() - started) / 1000);
    } catch (e) {
      this.opts.observer?.done?.(key, 'error', (this.clock.now() - started) / 1000);
      this.opts.onError?.(key, e);
      outcome = RETRY;
    }
    this.inFlight.delete(key);
    if (this.running) this.settle(key, outcome);
    if (this.inFlight.size === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
    this.pump();
  }

  private settle(key: string, outcome: Outcome): void {
    if (outcome.kind === 'retry') {
      const n = this.failureCount(key) + 1;
      this.failures.set(key, n);
      this.opts.observer?.retried?.(key);
      this.addAfter(key, this.backoffMs(n));
    } else {
      this.failures.delete(key);
      // A zero delay would be a loop in disguise; the base delay is the floor.
      if (outcome.kind === 'after') this.addAfter(key, Math.max(this.baseDelayMs, outcome.delayMs));
    }
    // The object changed while we worked on it: look again now, whatever the outcome.
    if (this.dirty.delete(key)) this.add(key);
  }
}
