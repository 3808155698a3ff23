import { createHash, randomUUID } from 'node:crypto';
import type { UnitOfWork } from '../tx.js';
import { CLOUDEVENTS_CONTENT_TYPE, toCloudEvent } from './cloud-event.js';
import type { ClaimedSubscription, OutboxStore, QueuedEvent } from './outbox-store.js';

/** Sends one request to a sink. The outbound-address policy lives behind this. */
export interface SinkTransport {
  /**
   * POST `body` to `url`.
   * @returns the response status. @throws for anything that got no HTTP answer (refused
   *   by the address policy, DNS, connect, timeout): each counts as a failed attempt.
   */
  post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number }>;
}

/** Signs the bearer token of one delivery: Arbor's issuer key, `aud` = the sink. */
export interface DeliverySigner {
  sign(sink: string, claims: { sub: string; jti: string; body_sha256: string }): Promise<string>;
}

export interface DeliveryOptions {
  /** CloudEvents `source`: Arbor's issuer URL. */
  source: string;
  /** How often an idle worker looks for queued events. */
  pollMs: number;
  /** How long a claim on a subscription lasts without renewal (a crashed worker's runs out). */
  leaseMs: number;
  /** Consecutive failures after which a subscription is dead-lettered. */
  maxAttempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Subscriptions delivered to at once by this worker. */
  concurrency?: number;
  /** Events sent per claim before the lease is given back (fairness between sinks). */
  batch?: number;
  random?: () => number;
}

export interface DeliveryLog {
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

/** What this worker did since it started (tests and the benchmark read it). */
export interface DeliveryCounters {
  delivered: number;
  failed: number;
  deadLettered: number;
}

/**
 * Exponential backoff with "full jitter" over the upper half: the n-th consecutive
 * failure waits between ½ and 1 × min(max, base·2^(n−1)), so sinks that failed together
 * do not retry together.
 */
export function backoffMs(
  failures: number,
  base: number,
  max: number,
  random: () => number,
): number {
  const ceiling = Math.min(max, base * 2 ** Math.max(0, Math.min(failures - 1, 30)));
  return Math.round(ceiling * (0.5 + random() / 2));
}

/**
 * The delivery worker: takes leases on subscriptions with queued events and sends those
 * events to each sink in order, one at a time, as signed CloudEvents. At-least-once: an
 * event leaves the outbox only after its sink answered 2xx, so the only duplicate is an
 * event sent just before a crash (or a lost lease) and not yet marked.
 */
export class DeliveryWorker {
  readonly owner = `worker-${randomUUID()}`;
  readonly counters: DeliveryCounters = { delivered: 0, failed: 0, deadLettered: 0 };
  #running = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  readonly #random: () => number;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly outbox: OutboxStore,
    private readonly transport: SinkTransport,
    private readonly signer: DeliverySigner,
    private readonly o: DeliveryOptions,
    private readonly log: DeliveryLog,
  ) {
    this.#random = o.random ?? Math.random;
  }

  get running(): boolean {
    return this.#running;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.run();
  }

  /** Finish the deliveries in flight, give the leases back, and stop. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#wake?.();
    await this.#loop;
    this.#loop = undefined;
  }

  /** Look for work now instead of at the next poll. */
  poke(): void {
    this.#wake?.();
  }

  private async run(): Promise<void> {
    while (this.#running) {
      let busy = false;
      try {
        busy = await this.tick();
      } catch (e) {
        this.log.warn({ err: e }, 'event delivery: poll failed');
      }
      if (!busy && this.#running) await this.sleep(this.o.pollMs);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.#wake = done;
    });
  }

  /** One round: claim due subscriptions and drain a batch of each. @returns whether any was due. */
  async tick(): Promise<boolean> {
    // An idle poll is one read: it neither takes a write transaction nor marks what this
    // process remembers from reads (list counts) as stale.
    if (!(await this.uow.read((tx) => this.outbox.anyDue(tx)))) return false;
    const claimed = await this.uow.run((tx) =>
      this.outbox.claim(tx, this.owner, this.o.leaseMs, this.o.concurrency ?? 4),
    );
    await Promise.all(claimed.map((s) => this.drain(s)));
    return claimed.length > 0;
  }

  private async drain(s: ClaimedSubscription): Promise<void> {
    try {
      const queued = await this.uow.read((tx) => this.outbox.queued(tx, s.uid, this.o.batch ?? 50));
      for (const q of queued) {
        if (!this.#running) return;
        const error = await this.send(s, q);
        if (error !== undefined) {
          const failures = s.consecutiveFailures + 1;
          const deadLetter = failures >= this.o.maxAttempts;
          this.counters.failed++;
          if (deadLetter) this.counters.deadLettered++;
          const retryInMs = backoffMs(
            failures,
            this.o.backoffBaseMs,
            this.o.backoffMaxMs,
            this.#random,
          );
          this.log.warn(
            { subscription: s.uid, event: q.event.id, failures, deadLetter, error },
            'event delivery failed',
          );
          await this.uow.run((tx) =>
            this.outbox.failed(tx, s.uid, q.seq, this.owner, { error, retryInMs, deadLetter }),
          );
          return;
        }
        this.counters.delivered++;
        s.consecutiveFailures = 0;
        const held = await this.uow.run((tx) =>
          this.outbox.delivered(tx, s.uid, q.seq, this.owner, this.o.leaseMs),
        );
        if (!held) {
          this.log.warn({ subscription: s.uid }, 'event delivery: lease lost; stopping this sink');
          return;
        }
      }
    } finally {
      await this.uow
        .run((tx) => this.outbox.release(tx, s.uid, this.owner))
        .catch((e: unknown) => {
          this.log.warn({ err: e, subscription: s.uid }, 'event delivery: could not release lease');
        });
    }
  }

  /** @returns undefined on 2xx, else why not (status or transport error), for the status. */
  private async send(s: ClaimedSubscription, q: QueuedEvent): Promise<string | undefined> {
    const body = JSON.stringify(toCloudEvent(q.event, this.o.source));
    try {
      const token = await this.signer.sign(s.sink, {
        sub: s.uid,
        jti: q.event.id,
        body_sha256: createHash('sha256').update(body).digest('base64url'),
      });
      const res = await this.transport.post(
        s.sink,
        {
          'content-type': CLOUDEVENTS_CONTENT_TYPE,
          authorization: `Bearer ${token}`,
          'user-agent': 'arbor-events/1',
        },
        body,
      );
      if (res.status >= 200 && res.status < 300) return undefined;
      return `sink answered HTTP ${res.status}`;
    } catch (e) {
      return e instanceof Error ? e.message : String(e);
    }
  }
}
