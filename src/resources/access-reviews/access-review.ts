import type { ListSpec } from '../../core/list-request.js';
import type { UpdateSpec } from '../../core/field-mask.js';

/** OPEN until every item is decided (COMPLETED) or its due time passes (DEFAULTED). */
export type AccessReviewState = 'OPEN' | 'COMPLETED' | 'DEFAULTED';

/** What a review's due time does to the items still undecided then. */
export type ReviewDefault = 'keep' | 'expire';

/** One item's verdict. */
export type ReviewDecision = 'keep' | 'shorten' | 'remove';

/**
 * A review of the role bindings at and below a group, as they were when it was opened
 * (docs/access-reviews.md). The items are listed on their own (`:items`); the review
 * carries their counts.
 */
export interface AccessReview {
  uid: string;
  /** The group reviewed; the uid hangs under it. */
  parentUid: string;
  state: AccessReviewState;
  dueTime: Date;
  defaultDecision: ReviewDefault;
  /** Who opened it: an identity's uid, `admin`, or `system:access-review-schedule`. */
  openedBy: string;
  itemCount: number;
  decidedCount: number;
  /** When it was completed or defaulted. */
  closeTime?: Date;
  createTime: Date;
  updateTime: Date;
}

/** One binding in a review's scope, as it was at open time, and what was decided about it. */
export interface AccessReviewItem {
  uid: string;
  /** The review; the item's uid hangs under it. */
  reviewUid: string;
  bindingUid: string;
  /** The group the binding grants at. */
  groupUid: string;
  holder: { uid: string; name: string };
  role: { uid: string; name: string };
  /** The holder as a path of names, where the caller may list it (PathBook). */
  holderPath?: string;
  /** The role as a path of names (a built-in: its name), where the caller may list it. */
  rolePath?: string;
  /** The group as a path of names, where the caller may list it. */
  groupPath?: string;
  /** When the binding last granted a decision; absent: never since it started. */
  lastUsedTime?: Date;
  /** Unused for the unused-access window (90 days) when the review was opened. */
  unused: boolean;
  /** The binding's expiry at open time. */
  expireTime?: Date;
  decision?: ReviewDecision;
  /** The expiry a `shorten` set. */
  decisionExpireTime?: Date;
  reason?: string;
  /** An identity's uid, `admin`, or `system:access-review-default` for the default. */
  decidedBy?: string;
  decideTime?: Date;
}

/** The recurring review a group asks for: opened every `everyDays`, due `dueInDays` later. */
export interface ReviewSchedule {
  groupUid: string;
  everyDays: number;
  dueInDays: number;
  defaultDecision: ReviewDefault;
  nextOpenTime: Date;
  /** Who set it (the identity the worker's reviews name as the schedule's owner). */
  setBy: string;
}

export const ACCESS_REVIEW_TYPE = 'iam.arbor.dev/AccessReview';
export const ACCESS_REVIEW_ITEM_TYPE = 'iam.arbor.dev/AccessReviewItem';
export const ACCESS_REVIEW_SCHEDULE_TYPE = 'iam.arbor.dev/AccessReviewSchedule';

export const ACCESS_REVIEW_LIST: ListSpec = {
  kind: 'access_reviews',
  orderBy: ['uid', 'created_at'],
  defaultOrder: { field: 'created_at', direction: 'desc' },
  filters: { state: 'string' },
};

/** A review's items: by uid; `review` is required, `decision` (`none` for undecided) optional. */
export const ACCESS_REVIEW_ITEM_LIST: ListSpec = {
  kind: 'access_review_items',
  orderBy: ['uid'],
  defaultOrder: { field: 'uid', direction: 'asc' },
  filters: { review: 'uid', decision: 'string' },
};

/** Nothing is patched: a review moves by decisions and its due time. */
export const ACCESS_REVIEW_UPDATE: UpdateSpec = {
  mutable: {},
  outputOnly: [
    'uid',
    'state',
    'openedBy',
    'itemCount',
    'decidedCount',
    'closeTime',
    'createTime',
    'updateTime',
  ],
};

/**
 * The most bindings one review may hold: a review larger than this cannot be read and
 * decided by people anyway, and it bounds the rows, audit records and events one open makes.
 * Review a deeper group instead.
 */
export const MAX_REVIEW_ITEMS = 10_000;
/** The latest a review may be due, and the longest a `shorten` may leave a binding. */
export const MAX_DUE_DAYS = 365;
/** How long a binding must go unused to be an unused-access finding (as `access:unused`). */
export const UNUSED_WINDOW_DAYS = 90;
/** How many reviews a group may have open at once (each bounds its own items). */
export const MAX_OPEN_PER_GROUP = 3;
