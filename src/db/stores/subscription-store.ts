import type { Knex } from 'knex';
import { alreadyExists, notFound } from '../../core/rpc-error.js';
import { GROUP_TYPE } from '../../resources/groups/group.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import {
  SUBSCRIPTION_TYPE,
  type Subscription,
  type SubscriptionState,
  type ValidationState,
} from '../../resources/subscriptions/subscription.js';
import type { SubscriptionPatch } from '../../resources/subscriptions/subscription-input.js';
import type {
  NewSubscription,
  SubscriptionStore,
} from '../../resources/subscriptions/subscription-store.js';
import type { Tx } from '../../resources/tx.js';
import { isForeignKeyViolation, isUniqueViolation } from '../errors.js';
import { standardList, type StandardListSpec } from '../standard-list.js';
import { kx } from '../unit-of-work.js';

interface SubscriptionRow {
  uid: string;
  parent_uid: string;
  name: string;
  description: string;
  sink: string;
  types: string[];
  created_at: Date;
  updated_at: Date;
  state: SubscriptionState;
  consecutive_failures: number;
  last_error: string | null;
  last_attempt_at: Date | null;
  last_delivered_at: Date | null;
  dead_lettered_at: Date | null;
  delivered_count: string;
  pending_count: string;
  validation_state: ValidationState;
  validated_at: Date | null;
  allowed_rate: number | null;
}

const COLUMNS = [
  'uid',
  'parent_uid',
  'name',
  'description',
  'sink',
  'types',
  'created_at',
  'updated_at',
  'state',
  'consecutive_failures',
  'last_error',
  'last_attempt_at',
  'last_delivered_at',
  'dead_lettered_at',
  'delivered_count',
  'validation_state',
  'validated_at',
  'allowed_rate',
];

/** The queue length, counted where it is read (the outbox is short when sinks keep up). */
function withPending(k: Knex, table = 'subscriptions'): Knex.Raw {
  return k.raw(
    `(SELECT count(*) FROM event_outbox o WHERE o.subscription_uid = ${table}.uid) AS pending_count`,
  );
}

function toSubscription(r: SubscriptionRow): Subscription {
  return {
    uid: r.uid,
    parentUid: r.parent_uid,
    name: r.name,
    description: r.description,
    sink: r.sink,
    types: r.types,
    createTime: r.created_at,
    updateTime: r.updated_at,
    status: {
      state: r.state,
      consecutiveFailures: r.consecutive_failures,
      lastError: r.last_error,
      lastAttemptTime: r.last_attempt_at,
      lastDeliveryTime: r.last_delivered_at,
      deadLetterTime: r.dead_lettered_at,
      deliveredCount: String(r.delivered_count),
      pendingCount: String(r.pending_count ?? '0'),
      validation: r.validation_state,
      validationTime: r.validated_at,
      allowedRate: r.allowed_rate,
    },
  };
}

function nameTaken(name: string) {
  return alreadyExists(
    SUBSCRIPTION_TYPE,
    `a subscription named "${name}" already exists in this group`,
  );
}

export class KnexSubscriptionStore implements SubscriptionStore {
  async get(tx: Tx, uid: string): Promise<Subscription | undefined> {
    const k = kx(tx);
    const row = (await k('subscriptions')
      .where({ uid })
      .first([...COLUMNS, withPending(k)])) as SubscriptionRow | undefined;
    return row && toSubscription(row);
  }

  async insert(tx: Tx, s: NewSubscription): Promise<Subscription> {
    const k = kx(tx);
    try {
      const [row] = (await k('subscriptions')
        .insert({
          uid: s.uid,
          parent_uid: s.parentUid,
          name: s.name,
          description: s.description,
          sink: s.sink,
          types: JSON.stringify(s.types),
        })
        .returning(COLUMNS)) as [SubscriptionRow];
      return toSubscription({ ...row, pending_count: '0' });
    } catch (e) {
      if (isForeignKeyViolation(e)) throw notFound(GROUP_TYPE, s.parentUid);
      if (isUniqueViolation(e)) throw nameTaken(s.name);
      throw e;
    }
  }

  async update(tx: Tx, uid: string, patch: SubscriptionPatch): Promise<Subscription | undefined> {
    const k = kx(tx);
    const { types, ...rest } = patch;
    try {
      const n = await k('subscriptions')
        .where({ uid })
        .update({
          ...rest,
          ...(types !== undefined ? { types: JSON.stringify(types) } : {}),
          // A new sink has not agreed to anything yet: ask it again before delivering.
          // (SET reads the row as it was, so `sink` here is the old value.)
          ...(rest.sink !== undefined
            ? {
                validation_state: k.raw(
                  `CASE WHEN sink = ? THEN validation_state ELSE 'PENDING' END`,
                  [rest.sink],
                ),
                validated_at: k.raw(`CASE WHEN sink = ? THEN validated_at END`, [rest.sink]),
                allowed_rate: k.raw(`CASE WHEN sink = ? THEN allowed_rate END`, [rest.sink]),
              }
            : {}),
          updated_at: k.fn.now(),
          // An update is how an owner resumes a dead-lettered subscription.
          state: 'ACTIVE',
          consecutive_failures: 0,
          dead_lettered_at: null,
          next_attempt_at: k.fn.now(),
        });
      if (n === 0) return undefined;
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken(patch.name ?? '');
      throw e;
    }
    return this.get(tx, uid);
  }

  async delete(tx: Tx, uid: string): Promise<boolean> {
    return (await kx(tx)('subscriptions').where({ uid }).del()) > 0;
  }

  async list(tx: Tx, q: PageQuery): Promise<StorePage<Subscription>> {
    const k = kx(tx);
    const spec: StandardListSpec = {
      table: 'subscriptions',
      sort: { name: 'name', created_at: 'created_at' },
      filters: { name: 'subscriptions.name' },
      select: COLUMNS.map((c) => `subscriptions.${c}`),
      extend: (qb) => void qb.select(withPending(k)),
    };
    const page = await standardList<SubscriptionRow>(k, spec, q);
    return { ...page, items: page.items.map(toSubscription) };
  }
}
