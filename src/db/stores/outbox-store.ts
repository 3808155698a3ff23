import type {
  ClaimedSubscription,
  FailureOutcome,
  OutboxStore,
  QueuedEvent,
} from '../../resources/events/outbox-store.js';
import type { ValidationState } from '../../resources/subscriptions/subscription.js';
import type { Tx } from '../../resources/tx.js';
import { AUDIT_COLUMNS, toAuditEvent, type AuditRow } from './audit-store.js';
import { kx } from '../unit-of-work.js';

const ms = (n: number) => Math.max(0, Math.round(n));

interface ClaimRow {
  uid: string;
  parent_uid: string;
  sink: string;
  consecutive_failures: number;
  validation_state: ValidationState;
  allowed_rate: number | null;
}

/** What a worker may claim: ACTIVE, due, unleased (or lease run out), something queued. */
const CLAIMABLE = `c.state = 'ACTIVE'
             AND c.next_attempt_at <= now()
             AND (c.lease_until IS NULL OR c.lease_until < now())
             AND EXISTS (SELECT 1 FROM event_outbox o WHERE o.subscription_uid = c.uid)`;

export class KnexOutboxStore implements OutboxStore {
  async anyDue(tx: Tx): Promise<boolean> {
    const res = (await kx(tx).raw(
      `SELECT EXISTS (SELECT 1 FROM subscriptions c WHERE ${CLAIMABLE}) AS due`,
    )) as { rows: Array<{ due: boolean }> };
    return res.rows[0]?.due === true;
  }

  async claim(
    tx: Tx,
    owner: string,
    leaseMs: number,
    limit: number,
  ): Promise<ClaimedSubscription[]> {
    // SKIP LOCKED: a replica claiming at the same moment takes other rows instead of
    // waiting; the lease then keeps the row ours across the short transactions that follow.
    const res = (await kx(tx).raw(
      `UPDATE subscriptions s
          SET lease_owner = ?, lease_until = now() + ? * interval '1 millisecond'
        WHERE s.uid IN (
          SELECT c.uid FROM subscriptions c
           WHERE ${CLAIMABLE}
           ORDER BY c.next_attempt_at
           LIMIT ?
           FOR UPDATE SKIP LOCKED)
        RETURNING s.uid, s.parent_uid, s.sink, s.consecutive_failures,
                  s.validation_state, s.allowed_rate`,
      [owner, ms(leaseMs), limit],
    )) as { rows: ClaimRow[] };
    return res.rows.map((r) => ({
      uid: r.uid,
      parentUid: r.parent_uid,
      sink: r.sink,
      consecutiveFailures: r.consecutive_failures,
      validation: r.validation_state,
      allowedRate: r.allowed_rate,
    }));
  }

  async queued(tx: Tx, subscriptionUid: string, limit: number): Promise<QueuedEvent[]> {
    const rows = (await kx(tx)('event_outbox as o')
      .join('audit_events as a', 'a.seq', 'o.event_seq')
      .where('o.subscription_uid', subscriptionUid)
      .orderBy('o.event_seq')
      .limit(limit)
      .select([
        'o.event_seq',
        'o.attempts',
        'o.traceparent',
        ...AUDIT_COLUMNS.map((c) => `a.${c}`),
      ])) as Array<AuditRow & { event_seq: string; attempts: number; traceparent: string | null }>;
    return rows.map((r) => ({
      seq: String(r.event_seq),
      attempts: r.attempts,
      traceparent: r.traceparent,
      event: toAuditEvent(r),
    }));
  }

  async delivered(
    tx: Tx,
    subscriptionUid: string,
    seq: string,
    owner: string,
    leaseMs: number,
  ): Promise<boolean> {
    const k = kx(tx);
    const held = await k('subscriptions')
      .where({ uid: subscriptionUid, lease_owner: owner })
      .update({
        delivered_count: k.raw('delivered_count + 1'),
        consecutive_failures: 0,
        last_error: null,
        last_attempt_at: k.fn.now(),
        last_delivered_at: k.fn.now(),
        lease_until: k.raw(`now() + ? * interval '1 millisecond'`, [ms(leaseMs)]),
      });
    if (held === 0) return false;
    await k('event_outbox').where({ subscription_uid: subscriptionUid, event_seq: seq }).del();
    return true;
  }

  async validated(
    tx: Tx,
    subscriptionUid: string,
    owner: string,
    allowedRate: number | null,
  ): Promise<boolean> {
    const k = kx(tx);
    const held = await k('subscriptions')
      .where({ uid: subscriptionUid, lease_owner: owner })
      .update({
        validation_state: 'ALLOWED',
        validated_at: k.fn.now(),
        allowed_rate: allowedRate,
      });
    return held > 0;
  }

  async failed(
    tx: Tx,
    subscriptionUid: string,
    seq: string,
    owner: string,
    f: FailureOutcome,
  ): Promise<void> {
    const k = kx(tx);
    const held = await k('subscriptions')
      .where({ uid: subscriptionUid, lease_owner: owner })
      .update({
        consecutive_failures: k.raw('consecutive_failures + 1'),
        last_error: f.error.slice(0, 500),
        last_attempt_at: k.fn.now(),
        next_attempt_at: k.raw(`now() + ? * interval '1 millisecond'`, [ms(f.retryInMs)]),
        ...(f.deadLetter ? { state: 'DEAD_LETTER', dead_lettered_at: k.fn.now() } : {}),
        ...(f.refused ? { validation_state: 'REFUSED', validated_at: k.fn.now() } : {}),
        lease_owner: null,
        lease_until: null,
      });
    if (held === 0) return;
    await k('event_outbox')
      .where({ subscription_uid: subscriptionUid, event_seq: seq })
      .update({ attempts: k.raw('attempts + 1') });
  }

  async release(
    tx: Tx,
    subscriptionUid: string,
    owner: string,
    notBeforeMs?: number,
  ): Promise<void> {
    const k = kx(tx);
    await k('subscriptions')
      .where({ uid: subscriptionUid, lease_owner: owner })
      .update({
        lease_owner: null,
        lease_until: null,
        ...(notBeforeMs !== undefined
          ? { next_attempt_at: k.raw(`now() + ? * interval '1 millisecond'`, [ms(notBeforeMs)]) }
          : {}),
      });
  }
}
