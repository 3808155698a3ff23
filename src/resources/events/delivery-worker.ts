import { createHash, randomUUID } from 'node:crypto';
import { withSpan, withSpanFor } from '../../tracing/spans.js';
import type { UnitOfWork } from '../tx.js';
import { CLOUDEVENTS_CONTENT_TYPE, toCloudEvent } from './cloud-event.js';
import type { ClaimedSubscription, OutboxStore, QueuedEvent } from './outbox-store.js';
import type { DeliverySigner, SinkTransport } from './sink-transport.js';
import { webhookConsent } from './webhook-validation.js';

export interface DeliveryOptions {
  /** CloudEvents `source`: Arbor's issuer URL. */
  source: string;
  /** `WebHook-Request-Origin`: the host name of Arbor's issuer URL. */
  origin: string;
  /** How often an idle worker looks for queued events. */
  pollMs: number;
  /** How long a claim on a subscription lasts without renewal (a crashed worker's runs out). */
  leaseMs: number;
  /** Consecutive failures after which a subscription is dead-lettered. */
  maxAttempts: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /**
   * Subscriptions delivered to at once by this worker, each on its own: a slot freed by
   * one sink is filled at once, whatever the others are doing.
   */
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

/** Why a request to a sink did not count as delivered, or that the worker is stopping. */
type Outcome = { ok: true } | { ok: false; error: string; refused?: boolean } | 'stopped';

/**
 * The delivery worker: takes leases on subscriptions with queued events and sends those
 * events to each sink in order, one at a time, as signed CloudEvents. At-least-once: an
 * event leaves the outbox only after its sink answered 2xx, so the only duplicate is an
 * event sent just before a crash (or a lost lease) and not yet marked.
 *
 * Each subscription drains on its own (up to `concurrency` at once): the worker never
 * waits for one sink before claiming or serving another, and every request has a
 * whole-request deadline (the transport's), so a slow or silent sink delays only itself.
 * Before the first delivery to a sink, the sink must agree to the subscription
 * (webhook-validation.ts).
 */
export class DeliveryWorker {
  readonly owner = `worker-${randomUUID()}`;
  readonly counters: DeliveryCounters = { delivered: 0, failed: 0, deadLettered: 0 };
  #running = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  /** Drains in progress, by subscription uid. */
  readonly #draining = new Map<string, Promise<void>>();
  #abort = new AbortController();
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
    this.#abort = new AbortController();
    this.#loop = this.run();
  }

  /**
   * Stop: requests in flight are cut off (not counted as failures), leases given back.
   */
  async stop(): Promise<void> {
    this.#running = false;
    this.#abort.abort();
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
      let claimed = false;
      try {
        claimed = await this.fill();
      } catch (e) {
        this.log.warn({ err: e }, 'event delivery: poll failed');
      }
      // Asleep until the poll, a poke, or a drain that ends and frees its slot.
      if (!claimed && this.#running) await this.sleep(this.o.pollMs);
    }
    await Promise.all(this.#draining.values());
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

  /**
   * Claim due subscriptions for the free slots and start draining each, without waiting
   * for any of them. @returns whether anything was claimed.
   */
  private async fill(): Promise<boolean> {
    const free = (this.o.concurrency ?? 16) - this.#draining.size;
    if (free <= 0) return false;
    // An idle poll is one read: it neither takes a write transaction nor marks what this
    // process remembers from reads (list counts) as stale.
    if (!(await this.uow.read((tx) => this.outbox.anyDue(tx)))) return false;
    const claimed = await this.uow.run((tx) =>
      this.outbox.claim(tx, this.owner, this.o.leaseMs, free),
    );
    for (const s of claimed) {
      // One trace per drain while tracing is on: its reads, the validation handshake and its
      // writes, under one span. Each event's send is in the trace of the request that
      // recorded it, linked to this span (sendAttributes says why).
      const d = withSpan(
        'event delivery',
        () => ({ 'arbor.subscription.uid': s.uid }),
        () => this.drain(s),
      )
        .catch((e: unknown) => {
          this.log.warn({ err: e, subscription: s.uid }, 'event delivery: drain failed');
        })
        .finally(() => {
          // The lease was given back before this runs, so a newer drain of the same
          // subscription may already hold the entry: leave that one.
          if (this.#draining.get(s.uid) === d) this.#draining.delete(s.uid);
          this.#wake?.();
        });
      this.#draining.set(s.uid, d);
    }
    return claimed.length > 0;
  }

  private async drain(s: ClaimedSubscription): Promise<void> {
    let notBeforeMs: number | undefined;
    try {
      if (s.validation !== 'ALLOWED') {
        const agreed = await this.validate(s);
        if (!agreed) return;
      }
      // A sink that allowed a rate gets one event per claim, spaced by the claim's due time.
      const limit = s.allowedRate !== null ? 1 : (this.o.batch ?? 50);
      const queued = await this.uow.read((tx) => this.outbox.queued(tx, s.uid, limit));
      for (const q of queued) {
        if (!this.#running) return;
        // The send joins the trace of the request that recorded the event (its stored
        // traceparent), linked to this drain's: see sendAttributes.
        const outcome = await withSpanFor(q.traceparent, 'event send', sendAttributes(s, q), () =>
          this.send(s, q),
        );
        if (outcome === 'stopped') return;
        if (!outcome.ok) {
          await this.fail(s, q.seq, outcome.error, false);
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
      // Counted from the answer, not the request: arrivals at the sink are never closer
      // than the interval, whatever the latency of each request.
      if (s.allowedRate !== null) notBeforeMs = Math.ceil(60_000 / s.allowedRate);
    } finally {
      await this.uow
        .run((tx) => this.outbox.release(tx, s.uid, this.owner, notBeforeMs))
        .catch((e: unknown) => {
          this.log.warn({ err: e, subscription: s.uid }, 'event delivery: could not release lease');
        });
    }
  }

  /** Count a failure on `s`, back off or dead-letter, and give the lease back. */
  private async fail(
    s: ClaimedSubscription,
    seq: string,
    error: string,
    refused: boolean,
  ): Promise<void> {
    const failures = s.consecutiveFailures + 1;
    const deadLetter = failures >= this.o.maxAttempts;
    this.counters.failed++;
    if (deadLetter) this.counters.deadLettered++;
    const retryInMs = backoffMs(failures, this.o.backoffBaseMs, this.o.backoffMaxMs, this.#random);
    this.log.warn({ subscription: s.uid, failures, deadLetter, error }, 'event delivery failed');
    await this.uow.run((tx) =>
      this.outbox.failed(tx, s.uid, seq, this.owner, { error, retryInMs, deadLetter, refused }),
    );
  }

  /**
   * The webhook validation handshake: ask the sink whether it accepts this subscription.
   * @returns whether it agreed (and delivery may go on).
   */
  private async validate(s: ClaimedSubscription): Promise<boolean> {
    const outcome = await this.request(s, async (token) => {
      const res = await this.transport.options(
        s.sink,
        {
          'webhook-request-origin': this.o.origin,
          authorization: `Bearer ${token}`,
          'user-agent': USER_AGENT,
        },
        this.#abort.signal,
      );
      const consent = webhookConsent(res, this.o.origin);
      if (!consent.agreed) return { ok: false, error: consent.why, refused: true };
      const held = await this.uow.run((tx) =>
        this.outbox.validated(tx, s.uid, this.owner, consent.allowedRate),
      );
      if (!held) return 'stopped';
      s.allowedRate = consent.allowedRate;
      return { ok: true };
    });
    if (outcome === 'stopped') return false;
    if (outcome.ok) return true;
    // The failure is the head event's: it is what the sink's refusal holds back.
    const head = await this.uow.read((tx) => this.outbox.queued(tx, s.uid, 1));
    await this.fail(s, head[0]?.seq ?? '0', outcome.error, outcome.refused === true);
    return false;
  }

  /** One delivery. */
  private send(s: ClaimedSubscription, q: QueuedEvent): Promise<Outcome> {
    const body = JSON.stringify(toCloudEvent(q.event, this.o.source));
    const claims = {
      jti: q.event.id,
      body_sha256: createHash('sha256').update(body).digest('base64url'),
    };
    return this.request(
      s,
      async (token) => {
        const res = await this.transport.post(
          s.sink,
          {
            'content-type': CLOUDEVENTS_CONTENT_TYPE,
            authorization: `Bearer ${token}`,
            'webhook-request-origin': this.o.origin,
            'user-agent': USER_AGENT,
          },
          body,
          this.#abort.signal,
        );
        if (res.status >= 200 && res.status < 300) return { ok: true };
        return { ok: false, error: `sink answered HTTP ${res.status}` };
      },
      claims,
    );
  }

  /**
   * Sign a token for `s` and make one request with it. Transport errors become failed
   * outcomes; a stop of the worker is 'stopped' (not the sink's fault: nothing is counted).
   */
  private async request(
    s: ClaimedSubscription,
    go: (token: string) => Promise<Outcome>,
    extra: { jti?: string; body_sha256?: string } = {},
  ): Promise<Outcome> {
    try {
      const token = await this.signer.sign(s.sink, {
        sub: s.uid,
        subscription_group: s.parentUid,
        ...extra,
      });
      return await go(token);
    } catch (e) {
      if (this.#abort.signal.aborted) return 'stopped';
      return { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
  }
}

const USER_AGENT = 'arbor-events/1';

/**
 * The attributes of an event's send span (semantic conventions: messaging `send`, and the
 * CloudEvents attributes). The span is a child of the request that recorded the event, not
 * only linked to it: an operator looking at a request sees what its change set off, and the
 * sink's `traceparent` continues the same trace. It is linked to the drain's span, which
 * holds the claim, the handshake and the outbox writes, shared by the many events (of
 * many requests) one drain sends; a span has one parent, so that relation is the link.
 */
function sendAttributes(s: ClaimedSubscription, q: QueuedEvent) {
  return () => ({
    'messaging.operation.type': 'send',
    'messaging.operation.name': 'send',
    'cloudevents.event_id': q.event.id,
    'cloudevents.event_type': q.event.eventType,
    'cloudevents.event_subject': q.event.resourceUid,
    'arbor.subscription.uid': s.uid,
    'arbor.event.attempts': q.attempts,
  });
}
