import type { Visibility } from '../../core/visibility.js';
import type { PageQuery, StorePage } from '../list-types.js';
import type { Tx } from '../tx.js';
import type {
  AccessReview,
  AccessReviewItem,
  ReviewDecision,
  ReviewDefault,
  ReviewSchedule,
} from './access-review.js';

/** A binding in a new review's scope, with what the item shows of it. */
export type ScopedBinding = Omit<AccessReviewItem, 'uid' | 'reviewUid'>;

export interface NewAccessReview {
  uid: string;
  parentUid: string;
  dueTime: Date;
  defaultDecision: ReviewDefault;
  openedBy: string;
}

export interface ItemDecision {
  decision: ReviewDecision;
  decisionExpireTime?: Date;
  reason: string;
  decidedBy: string;
  at: Date;
}

export interface AccessReviewStore {
  /**
   * Up to `limit` live bindings (started or not, unexpired at `now`) at or below `groupUid`,
   * each with its holder, role and last use; `unused` against `unusedBefore`.
   */
  bindingsIn(
    tx: Tx,
    groupUid: string,
    o: { now: Date; unusedBefore: Date; limit: number },
  ): Promise<ScopedBinding[]>;
  /** How many reviews of `groupUid` are open, counted under a lock on the group's reviews. */
  openAt(tx: Tx, groupUid: string): Promise<number>;
  /** The review and its items (uids under the review's), in one statement each. */
  insert(tx: Tx, r: NewAccessReview, items: ScopedBinding[]): Promise<AccessReview>;
  get(tx: Tx, uid: string): Promise<AccessReview | undefined>;
  list(tx: Tx, q: PageQuery): Promise<StorePage<AccessReview>>;
  /** A page of one review's items, only those whose binding lies in `bindings`. */
  listItems(tx: Tx, q: PageQuery, bindings: Visibility): Promise<StorePage<AccessReviewItem>>;
  getItem(tx: Tx, uid: string): Promise<AccessReviewItem | undefined>;
  /**
   * The item and its review, both locked for this transaction (decisions on one review
   * are serialised on its row).
   */
  lockItem(
    tx: Tx,
    uid: string,
  ): Promise<{ review: AccessReview; item: AccessReviewItem } | undefined>;
  /** Record a decision on an undecided item; counts it on the review, COMPLETED when last. */
  decide(tx: Tx, itemUid: string, d: ItemDecision): Promise<AccessReview>;
  /**
   * Up to `limit` open reviews due at `now`, moved to DEFAULTED by one
   * `UPDATE … WHERE state = 'OPEN' … RETURNING` over rows locked with SKIP LOCKED: each
   * replica's worker claims different reviews, and a review is claimed once.
   */
  claimDue(tx: Tx, now: Date, limit: number): Promise<AccessReview[]>;
  /** The undecided items of a review. */
  undecided(tx: Tx, reviewUid: string): Promise<AccessReviewItem[]>;
  /** Mark undecided items of a review as decided by its default. */
  decideRest(tx: Tx, reviewUid: string, d: ItemDecision): Promise<void>;
  getSchedule(tx: Tx, groupUid: string): Promise<ReviewSchedule | undefined>;
  setSchedule(tx: Tx, s: ReviewSchedule): Promise<void>;
  deleteSchedule(tx: Tx, groupUid: string): Promise<boolean>;
  /**
   * Up to `limit` schedules whose next review is due to open at `now`, locked (SKIP LOCKED),
   * each moved on to its next time in the same statement (`UPDATE … RETURNING` the old row).
   */
  claimSchedules(tx: Tx, now: Date, limit: number): Promise<ReviewSchedule[]>;
}
