import type { Knex } from 'knex';
import type { AuditEvent } from '../../resources/audit/audit-event.js';
import type { AuditStore } from '../../resources/audit/audit-store.js';
import { referencesAsUids } from '../../resources/audit/references-as-uids.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import { matchesEventType } from '../../resources/subscriptions/subscription.js';
import type { Tx } from '../../resources/tx.js';
import { ancestryOf } from '../../core/uidp.js';
import { keysetPage, whereBelow, whereVisible } from '../keyset.js';
import { currentTraceparent } from '../../tracing/spans.js';
import { kx } from '../unit-of-work.js';

export interface AuditRow {
  id: string;
  seq?: string;
  occurred_at: Date;
  actor: string;
  actor_kind: AuditEvent['actorKind'];
  /** NULL but for a delegated token's changes (migration 0033). */
  actors: string[] | null;
  door: AuditEvent['door'];
  request_id: string | null;
  credential: string | null;
  resource_type: string;
  resource_uid: string;
  resource_parent_uid: string | null;
  operation: AuditEvent['operation'];
  event_type: string;
  changed_fields: string[];
  before: AuditEvent['before'];
  after: AuditEvent['after'];
  cause: AuditEvent['cause'];
  /** NULL never (migration 0020 fills older rows with `[]`); typed loosely for old dumps. */
  cascaded: AuditEvent['cascaded'] | null;
}

export const AUDIT_COLUMNS = [
  'id',
  'occurred_at',
  'actor',
  'actor_kind',
  'actors',
  'door',
  'request_id',
  'credential',
  'resource_type',
  'resource_uid',
  'resource_parent_uid',
  'operation',
  'event_type',
  'changed_fields',
  'before',
  'after',
  'cause',
  'cascaded',
] as const;

export function toAuditEvent(r: AuditRow): AuditEvent {
  return {
    id: r.id,
    time: r.occurred_at,
    actor: r.actor,
    actorKind: r.actor_kind,
    actors: r.actors,
    door: r.door,
    requestId: r.request_id,
    credential: r.credential,
    resourceType: r.resource_type,
    resourceUid: r.resource_uid,
    resourceParentUid: r.resource_parent_uid,
    operation: r.operation,
    eventType: r.event_type,
    changedFields: r.changed_fields,
    // Records written before references were kept as uids show no more than new ones.
    before: referencesAsUids(r.before),
    after: referencesAsUids(r.after),
    cause: r.cause,
    cascaded: r.cascaded ?? [],
  };
}

const json = (v: unknown) => (v === null ? null : JSON.stringify(v));

const FILTERS: Record<string, (qb: Knex.QueryBuilder, v: string) => void> = {
  resource_type: (qb, v) => void qb.where('a.resource_type', v),
  resource_uid: (qb, v) => void qb.where('a.resource_uid', v),
  within: (qb, v) =>
    void qb.where((w) => {
      w.where('a.resource_uid', v).orWhere((b) => whereBelow(b, 'a.resource_uid', v));
    }),
  actor: (qb, v) => void qb.where('a.actor', v),
  operation: (qb, v) => void qb.where('a.operation', v),
  door: (qb, v) => void qb.where('a.door', v),
  start_time: (qb, v) => void qb.where('a.occurred_at', '>=', v),
  end_time: (qb, v) => void qb.where('a.occurred_at', '<', v),
};

export class KnexAuditStore implements AuditStore {
  async append(tx: Tx, e: AuditEvent): Promise<void> {
    const k = kx(tx);
    const [row] = (await k('audit_events')
      .insert({
        id: e.id,
        occurred_at: e.time,
        actor: e.actor,
        actor_kind: e.actorKind,
        actors: json(e.actors),
        door: e.door,
        request_id: e.requestId,
        credential: e.credential,
        resource_type: e.resourceType,
        resource_uid: e.resourceUid,
        resource_parent_uid: e.resourceParentUid,
        operation: e.operation,
        event_type: e.eventType,
        changed_fields: JSON.stringify(e.changedFields),
        before: json(e.before),
        after: json(e.after),
        cause: json(e.cause),
        cascaded: JSON.stringify(e.cascaded),
      })
      .returning('seq')) as [{ seq: string }];
    // The outbox, in the same transaction: one row per subscription at or above the
    // resource whose type filter takes this event. Subscriptions are few per group, and
    // `parent_uid = ANY(ancestry)` is an index probe per ancestor.
    const subs = (await k('subscriptions')
      .whereIn('parent_uid', ancestryOf(e.resourceUid))
      .select('uid', 'types')) as Array<{ uid: string; types: string[] }>;
    const targets = subs.filter((s) => matchesEventType(s.types, e.eventType));
    if (targets.length > 0) {
      // The trace of the request recording the event, for its deliveries to join (while
      // tracing is on; migration 0024 says what the column accepts).
      const traceparent = currentTraceparent() ?? null;
      await k('event_outbox').insert(
        targets.map((s) => ({ subscription_uid: s.uid, event_seq: row.seq, traceparent })),
      );
    }
  }

  /**
   * Keyset over (occurred_at, id); `uidp.*`, visibility and `resource_uid` select by the
   * changed resource's uid, so an owner sees the history of what is in its subtree.
   */
  async list(tx: Tx, q: PageQuery): Promise<StorePage<AuditEvent>> {
    const k = kx(tx);
    const base = k('audit_events as a');
    if (q.uidp.childrenOf !== undefined) base.where('a.resource_parent_uid', q.uidp.childrenOf);
    if (q.uidp.descendantsOf !== undefined)
      whereBelow(base, 'a.resource_uid', q.uidp.descendantsOf);
    for (const [name, value] of Object.entries(q.filters)) {
      const f = FILTERS[name];
      if (f === undefined) throw new Error(`filter ${name} has no column`);
      f(base, value);
    }
    whereVisible(base, 'a.resource_uid', q.visibility);
    const page = await keysetPage<AuditRow>(
      base,
      { sort: { time: 'a.occurred_at', uid: 'a.id' }, uid: 'a.id' },
      q,
      // keysetPage reads the tie-breaker back as `uid`.
      (qb) => qb.select([...AUDIT_COLUMNS.map((c) => `a.${c}`), 'a.id as uid']),
    );
    return { ...page, items: page.items.map(toAuditEvent) };
  }
}
