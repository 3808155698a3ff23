import type { UpdateSpec } from '../../core/field-mask.js';
import type { ListSpec } from '../../core/list-request.js';

/** ACTIVE: delivering. DEAD_LETTER: stopped after too many failures; an update resumes it. */
export type SubscriptionState = 'ACTIVE' | 'DEAD_LETTER';

/**
 * The sink's answer to the webhook validation handshake (CloudEvents web hooks §4).
 * PENDING: not asked yet, or the sink could not be reached; ALLOWED: it agreed, events
 * flow; REFUSED: it answered without agreeing, nothing is sent and it is asked again after
 * the backoff. A new sink starts again at PENDING.
 */
export type ValidationState = 'PENDING' | 'ALLOWED' | 'REFUSED';

/** Delivery state, written by the delivery worker; output only. */
export interface SubscriptionStatus {
  state: SubscriptionState;
  consecutiveFailures: number;
  lastError: string | null;
  lastAttemptTime: Date | null;
  lastDeliveryTime: Date | null;
  deadLetterTime: Date | null;
  /** Events this subscription's sink acknowledged (int64 as a decimal string). */
  deliveredCount: string;
  /** Events queued for the sink and not yet acknowledged. */
  pendingCount: string;
  validation: ValidationState;
  /** When the sink last answered the handshake (agreed or refused). */
  validationTime: Date | null;
  /** The sink's `WebHook-Allowed-Rate` in requests per minute; null: no limit. */
  allowedRate: number | null;
}

/**
 * A subscription to the events of a group and everything below it, delivered as
 * CloudEvents to `sink` (docs/events.md).
 */
export interface Subscription {
  uid: string;
  parentUid: string;
  name: string;
  description: string;
  sink: string;
  /** Event types delivered (exact, or a prefix ending in `*`); empty = every type. */
  types: string[];
  createTime: Date;
  updateTime: Date;
  status: SubscriptionStatus;
}

export const SUBSCRIPTION_TYPE = 'events.arbor.dev/Subscription';

export const SUBSCRIPTION_LIST: ListSpec = {
  kind: 'subscriptions',
  orderBy: ['uid', 'name', 'created_at'],
  defaultOrder: { field: 'uid', direction: 'asc' },
  filters: { name: 'string' },
};

export const SUBSCRIPTION_UPDATE: UpdateSpec = {
  mutable: { name: '', description: '', sink: '', types: [] },
  outputOnly: ['uid', 'createTime', 'updateTime', 'status'],
};

/** Whether a subscription filtering on `types` receives an event of `eventType`. */
export function matchesEventType(types: readonly string[], eventType: string): boolean {
  if (types.length === 0) return true;
  return types.some((t) =>
    t.endsWith('*') ? eventType.startsWith(t.slice(0, -1)) : t === eventType,
  );
}
