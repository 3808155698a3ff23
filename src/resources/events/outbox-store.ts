import type { AuditEvent } from '../audit/audit-event.js';
import type { ValidationState } from '../subscriptions/subscription.js';
import type { Tx } from '../tx.js';

/** A subscription a worker holds the lease of, with what it needs to deliver. */
export interface ClaimedSubscription {
  uid: string;
  /** The group the subscription hangs under (a delivery token claim receivers pin). */
  parentUid: string;
  sink: string;
  consecutiveFailures: number;
  /** Whether the sink agreed to this subscription (webhook validation handshake). */
  validation: ValidationState;
  /** The sink's allowed requests per minute; null: no limit. */
  allowedRate: number | null;
}

/** One queued delivery: the event, in the order it was recorded. */
export interface QueuedEvent {
  /** Position in the audit trail (int64 as a string): the per-subscription order. */
  seq: string;
  attempts: number;
  /**
   * The trace context of the request that recorded the event (a W3C `traceparent`), for
   * the delivery to join; null while tracing was off. Read as untrusted: its trace id came
   * from a client.
   */
  traceparent: string | null;
  event: AuditEvent;
}

export interface FailureOutcome {
  error: string;
  /** When to try the same event again. */
  retryInMs: number;
  /** Stop delivering: the subscription goes to DEAD_LETTER. */
  deadLetter: boolean;
  /** The sink answered the validation handshake without agreeing: validation REFUSED. */
  refused?: boolean;
}

/**
 * The delivery side of the outbox. A lease on a subscription row (owner + expiry) makes one
 * worker at a time its only sender, across processes: claiming uses `FOR UPDATE SKIP LOCKED`
 * so replicas never wait on each other, and a killed process's lease simply runs out.
 */
export interface OutboxStore {
  /** Whether any subscription is due with queued events (a read: idle polls write nothing). */
  anyDue(tx: Tx): Promise<boolean>;
  /** Lease up to `limit` ACTIVE subscriptions that are due and have queued events. */
  claim(tx: Tx, owner: string, leaseMs: number, limit: number): Promise<ClaimedSubscription[]>;
  /** The oldest queued events of a subscription, oldest first. */
  queued(tx: Tx, subscriptionUid: string, limit: number): Promise<QueuedEvent[]>;
  /**
   * The sink acknowledged `seq`: dequeue it and extend the lease.
   * @returns false when `owner` no longer holds the lease (then nothing changed).
   */
  delivered(
    tx: Tx,
    subscriptionUid: string,
    seq: string,
    owner: string,
    leaseMs: number,
  ): Promise<boolean>;
  /**
   * The sink agreed to the subscription (validation ALLOWED) at `allowedRate` requests a
   * minute (null: no limit). @returns false when `owner` no longer holds the lease.
   */
  validated(
    tx: Tx,
    subscriptionUid: string,
    owner: string,
    allowedRate: number | null,
  ): Promise<boolean>;
  /** The sink refused or was unreachable: count, back off (or dead-letter), release. */
  failed(
    tx: Tx,
    subscriptionUid: string,
    seq: string,
    owner: string,
    f: FailureOutcome,
  ): Promise<void>;
  /**
   * Give the lease back (no-op when `owner` does not hold it); with `notBeforeMs`, the
   * subscription is not due again before then (a sink's allowed rate).
   */
  release(tx: Tx, subscriptionUid: string, owner: string, notBeforeMs?: number): Promise<void>;
}
