import { notFound } from '../../core/rpc-error.js';
import { newChildUid } from '../../core/uidp.js';
import type { Visibility } from '../../core/visibility.js';
import {
  type AccessReview,
  type AccessReviewItem,
  type AccessReviewState,
  type ReviewDecision,
  type ReviewDefault,
  type ReviewSchedule,
} from '../../resources/access-reviews/access-review.js';
import type {
  AccessReviewStore,
  ItemDecision,
  NewAccessReview,
  ScopedBinding,
} from '../../resources/access-reviews/access-review-store.js';
import { GROUP_TYPE } from '../../resources/groups/group.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import type { Tx } from '../../resources/tx.js';
import { isForeignKeyViolation } from '../errors.js';
import { whereBelow, whereVisible } from '../keyset.js';
import { standardList } from '../standard-list.js';
import { kx } from '../unit-of-work.js';

const T = 'access_reviews';
const I = 'access_review_items';
const S = 'access_review_schedules';
/** Items per INSERT: far below PostgreSQL's 65,535 parameters. */
const CHUNK = 500;

interface Row {
  uid: string;
  parent_uid: string;
  state: AccessReviewState;
  due_time: Date;
  default_decision: ReviewDefault;
  opened_by: string;
  item_count: number;
  decided_count: number;
  closed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface ItemRow {
  uid: string;
  parent_uid: string;
  binding_uid: string;
  group_uid: string;
  identity_uid: string;
  identity_name: string;
  role_uid: string;
  role_name: string;
  last_used_at: Date | null;
  unused: boolean;
  expire_time: Date | null;
  decision: ReviewDecision | null;
  decision_expire_time: Date | null;
  reason: string | null;
  decided_by: string | null;
  decided_at: Date | null;
}

interface ScheduleRow {
  group_uid: string;
  every_days: number;
  due_in_days: number;
  default_decision: ReviewDefault;
  next_open_at: Date;
  set_by: string;
}

const COLUMNS = [
  'uid',
  'parent_uid',
  'state',
  'due_time',
  'default_decision',
  'opened_by',
  'item_count',
  'decided_count',
  'closed_at',
  'created_at',
  'updated_at',
].map((c) => `${T}.${c}`);

function toReview(r: Row): AccessReview {
  return {
    uid: r.uid,
    parentUid: r.parent_uid,
    state: r.state,
    dueTime: r.due_time,
    defaultDecision: r.default_decision,
    openedBy: r.opened_by,
    itemCount: r.item_count,
    decidedCount: r.decided_count,
    ...(r.closed_at ? { closeTime: r.closed_at } : {}),
    createTime: r.created_at,
    updateTime: r.updated_at,
  };
}

function toItem(r: ItemRow): AccessReviewItem {
  return {
    uid: r.uid,
    reviewUid: r.parent_uid,
    bindingUid: r.binding_uid,
    groupUid: r.group_uid,
    holder: { uid: r.identity_uid, name: r.identity_name },
    role: { uid: r.role_uid, name: r.role_name },
    ...(r.last_used_at ? { lastUsedTime: r.last_used_at } : {}),
    unused: r.unused,
    ...(r.expire_time ? { expireTime: r.expire_time } : {}),
    ...(r.decision ? { decision: r.decision } : {}),
    ...(r.decision_expire_time ? { decisionExpireTime: r.decision_expire_time } : {}),
    ...(r.reason !== null ? { reason: r.reason } : {}),
    ...(r.decided_by !== null ? { decidedBy: r.decided_by } : {}),
    ...(r.decided_at ? { decideTime: r.decided_at } : {}),
  };
}

function toSchedule(r: ScheduleRow): ReviewSchedule {
  return {
    groupUid: r.group_uid,
    everyDays: r.every_days,
    dueInDays: r.due_in_days,
    defaultDecision: r.default_decision,
    nextOpenTime: r.next_open_at,
    setBy: r.set_by,
  };
}

function decisionColumns(d: ItemDecision) {
  return {
    decision: d.decision,
    decision_expire_time: d.decisionExpireTime ?? null,
    reason: d.reason,
    decided_by: d.decidedBy,
    decided_at: d.at,
  };
}

export class KnexAccessReviewStore implements AccessReviewStore {
  async bindingsIn(
    tx: Tx,
    groupUid: string,
    o: { now: Date; unusedBefore: Date; limit: number },
  ): Promise<ScopedBinding[]> {
    const k = kx(tx);
    const rows = (await k('role_bindings as rb')
      .join('identities as i', 'i.uid', 'rb.identity_uid')
      .join('roles as r', 'r.uid', 'rb.role_uid')
      .leftJoin('binding_usage as bu', 'bu.binding_uid', 'rb.uid')
      .where((w) => {
        w.where('rb.parent_uid', groupUid).orWhere((b) => whereBelow(b, 'rb.parent_uid', groupUid));
      })
      .where((w) => w.whereNull('rb.expire_time').orWhere('rb.expire_time', '>', o.now))
      .orderBy('rb.uid')
      .limit(o.limit)
      .select(
        'rb.uid',
        'rb.parent_uid',
        'rb.identity_uid',
        'i.name as identity_name',
        'rb.role_uid',
        'r.name as role_name',
        'bu.last_used_at',
        'rb.expire_time',
        // As access:unused counts it: never used counts from the binding's start.
        k.raw('COALESCE(bu.last_used_at, GREATEST(rb.created_at, rb.not_before)) < ? AS unused', [
          o.unusedBefore,
        ]),
      )) as Array<{
      uid: string;
      parent_uid: string;
      identity_uid: string;
      identity_name: string;
      role_uid: string;
      role_name: string;
      last_used_at: Date | null;
      expire_time: Date | null;
      unused: boolean;
    }>;
    return rows.map((r) => ({
      bindingUid: r.uid,
      groupUid: r.parent_uid,
      holder: { uid: r.identity_uid, name: r.identity_name },
      role: { uid: r.role_uid, name: r.role_name },
      ...(r.last_used_at ? { lastUsedTime: r.last_used_at } : {}),
      unused: r.unused,
      ...(r.expire_time ? { expireTime: r.expire_time } : {}),
    }));
  }

  async openAt(tx: Tx, groupUid: string): Promise<number> {
    const k = kx(tx);
    // Opens at one group are counted one after another (two racing opens see each other).
    await k.raw(`SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, [
      `access_reviews:open:${groupUid}`,
    ]);
    const row = (await k(T)
      .where({ parent_uid: groupUid, state: 'OPEN' })
      .count({ n: '*' })
      .first()) as { n: string | number };
    return Number(row.n);
  }

  async insert(tx: Tx, r: NewAccessReview, items: ScopedBinding[]): Promise<AccessReview> {
    const k = kx(tx);
    let row: Row | undefined;
    try {
      [row] = (await k(T)
        .insert({
          uid: r.uid,
          parent_uid: r.parentUid,
          due_time: r.dueTime,
          default_decision: r.defaultDecision,
          opened_by: r.openedBy,
          item_count: items.length,
        })
        .returning(COLUMNS)) as Row[];
    } catch (e) {
      if (isForeignKeyViolation(e)) throw notFound(GROUP_TYPE, r.parentUid);
      throw e;
    }
    for (let i = 0; i < items.length; i += CHUNK) {
      await k(I).insert(
        items.slice(i, i + CHUNK).map((b) => ({
          uid: newChildUid(r.uid),
          parent_uid: r.uid,
          binding_uid: b.bindingUid,
          group_uid: b.groupUid,
          identity_uid: b.holder.uid,
          identity_name: b.holder.name,
          role_uid: b.role.uid,
          role_name: b.role.name,
          last_used_at: b.lastUsedTime ?? null,
          unused: b.unused,
          expire_time: b.expireTime ?? null,
        })),
      );
    }
    return toReview(row!);
  }

  async get(tx: Tx, uid: string): Promise<AccessReview | undefined> {
    const row = (await kx(tx)(T).where(`${T}.uid`, uid).first(COLUMNS)) as Row | undefined;
    return row && toReview(row);
  }

  async list(tx: Tx, q: PageQuery): Promise<StorePage<AccessReview>> {
    const page = await standardList<Row>(
      kx(tx),
      {
        table: T,
        sort: { created_at: 'created_at' },
        filters: { state: `${T}.state` },
        select: COLUMNS,
      },
      q,
    );
    return { ...page, items: page.items.map(toReview) };
  }

  async listItems(
    tx: Tx,
    q: PageQuery,
    bindings: Visibility,
  ): Promise<StorePage<AccessReviewItem>> {
    const page = await standardList<ItemRow>(
      kx(tx),
      {
        table: I,
        sort: {},
        filters: {
          review: `${I}.parent_uid`,
          decision: (qb, v) =>
            void (v === 'none' ? qb.whereNull(`${I}.decision`) : qb.where(`${I}.decision`, v)),
        },
        select: [`${I}.*`],
        // Only the items whose binding the caller may list.
        extend: (qb) => void whereVisible(qb, `${I}.binding_uid`, bindings),
      },
      q,
    );
    return { ...page, items: page.items.map(toItem) };
  }

  async getItem(tx: Tx, uid: string): Promise<AccessReviewItem | undefined> {
    const row = (await kx(tx)(I).where({ uid }).first()) as ItemRow | undefined;
    return row && toItem(row);
  }

  async lockItem(
    tx: Tx,
    uid: string,
  ): Promise<{ review: AccessReview; item: AccessReviewItem } | undefined> {
    const k = kx(tx);
    const item = (await k(I).where({ uid }).first()) as ItemRow | undefined;
    if (!item) return undefined;
    // The review's row first: every decision of one review queues on it.
    const review = (await k(T).where(`${T}.uid`, item.parent_uid).forUpdate().first(COLUMNS)) as
      Row | undefined;
    const locked = (await k(I).where({ uid }).forUpdate().first()) as ItemRow | undefined;
    if (!review || !locked) return undefined;
    return { review: toReview(review), item: toItem(locked) };
  }

  async decide(tx: Tx, itemUid: string, d: ItemDecision): Promise<AccessReview> {
    const k = kx(tx);
    const [item] = (await k(I)
      .where({ uid: itemUid })
      .whereNull('decision')
      .update(decisionColumns(d))
      .returning(['parent_uid'])) as Array<{ parent_uid: string }>;
    if (!item) throw new Error(`review item ${itemUid} was decided under its lock`);
    const [row] = (await k(T)
      .where({ uid: item.parent_uid })
      .update({
        decided_count: k.raw('decided_count + 1'),
        state: k.raw(`CASE WHEN decided_count + 1 >= item_count THEN 'COMPLETED' ELSE state END`),
        closed_at: k.raw(
          `CASE WHEN decided_count + 1 >= item_count THEN ?::timestamptz ELSE NULL END`,
          [d.at],
        ),
        updated_at: k.fn.now(),
      })
      .returning(COLUMNS)) as Row[];
    return toReview(row!);
  }

  async claimDue(tx: Tx, now: Date, limit: number): Promise<AccessReview[]> {
    const k = kx(tx);
    // Claimed by one UPDATE … WHERE state = 'OPEN' RETURNING over rows locked SKIP LOCKED:
    // another worker's claim is neither waited for nor claimed twice.
    const due = k(T)
      .where('state', 'OPEN')
      .where('due_time', '<=', now)
      .orderBy([
        { column: 'due_time', order: 'asc' },
        { column: 'uid', order: 'asc' },
      ])
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .select('uid');
    const rows = (await k(T)
      .whereIn('uid', due)
      .where('state', 'OPEN')
      .update({ state: 'DEFAULTED', closed_at: now, updated_at: k.fn.now() })
      .returning(COLUMNS)) as Row[];
    return rows.map(toReview);
  }

  async undecided(tx: Tx, reviewUid: string): Promise<AccessReviewItem[]> {
    const rows = (await kx(tx)(I)
      .where({ parent_uid: reviewUid })
      .whereNull('decision')
      .orderBy('uid')) as ItemRow[];
    return rows.map(toItem);
  }

  async decideRest(tx: Tx, reviewUid: string, d: ItemDecision): Promise<void> {
    const k = kx(tx);
    const n = await k(I)
      .where({ parent_uid: reviewUid })
      .whereNull('decision')
      .update(decisionColumns(d));
    await k(T)
      .where({ uid: reviewUid })
      .update({ decided_count: k.raw('decided_count + ?', [n]), updated_at: k.fn.now() });
  }

  async getSchedule(tx: Tx, groupUid: string): Promise<ReviewSchedule | undefined> {
    const row = (await kx(tx)(S).where({ group_uid: groupUid }).first()) as ScheduleRow | undefined;
    return row && toSchedule(row);
  }

  async setSchedule(tx: Tx, s: ReviewSchedule): Promise<void> {
    const k = kx(tx);
    const row = {
      group_uid: s.groupUid,
      every_days: s.everyDays,
      due_in_days: s.dueInDays,
      default_decision: s.defaultDecision,
      next_open_at: s.nextOpenTime,
      set_by: s.setBy,
    };
    try {
      await k(S)
        .insert(row)
        .onConflict('group_uid')
        .merge({ ...row, updated_at: k.fn.now() });
    } catch (e) {
      if (isForeignKeyViolation(e)) throw notFound(GROUP_TYPE, s.groupUid);
      throw e;
    }
  }

  async deleteSchedule(tx: Tx, groupUid: string): Promise<boolean> {
    return (await kx(tx)(S).where({ group_uid: groupUid }).delete()) > 0;
  }

  async claimSchedules(tx: Tx, now: Date, limit: number): Promise<ReviewSchedule[]> {
    const k = kx(tx);
    const due = (await k(S)
      .where('next_open_at', '<=', now)
      .orderBy([
        { column: 'next_open_at', order: 'asc' },
        { column: 'group_uid', order: 'asc' },
      ])
      .limit(limit)
      .forUpdate()
      .skipLocked()) as ScheduleRow[];
    for (const s of due) {
      // The next opening is a whole number of periods on, past `now` (a worker that was down
      // for several periods opens one review, not one per period missed).
      await k(S)
        .where({ group_uid: s.group_uid })
        .update({
          next_open_at: k.raw(
            `next_open_at + make_interval(days => every_days *
               (floor(extract(epoch FROM (?::timestamptz - next_open_at)) / 86400 / every_days)::int + 1))`,
            [now],
          ),
        });
    }
    return due.map(toSchedule);
  }
}
