import type { PageQuery, StorePage } from '../list-types.js';
import type { Tx } from '../tx.js';
import type { Subscription } from './subscription.js';
import type { SubscriptionPatch } from './subscription-input.js';

export interface NewSubscription {
  uid: string;
  parentUid: string;
  name: string;
  description: string;
  sink: string;
  types: string[];
}

export interface SubscriptionStore {
  get(tx: Tx, uid: string): Promise<Subscription | undefined>;
  /** @throws RpcError NOT_FOUND (the group), ALREADY_EXISTS (the name is taken in the group). */
  insert(tx: Tx, s: NewSubscription): Promise<Subscription>;
  /**
   * Apply `patch`; any update also resumes delivery (state ACTIVE, failures reset).
   * @throws RpcError ALREADY_EXISTS on a rename collision. @returns undefined when missing.
   */
  update(tx: Tx, uid: string, patch: SubscriptionPatch): Promise<Subscription | undefined>;
  /** Deleting drops the events still queued for it. @returns false when nothing was there. */
  delete(tx: Tx, uid: string): Promise<boolean>;
  list(tx: Tx, q: PageQuery): Promise<StorePage<Subscription>>;
}
