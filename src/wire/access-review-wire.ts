import { z } from 'zod';
import {
  ACCESS_REVIEW_LIST,
  ACCESS_REVIEW_TYPE,
  ACCESS_REVIEW_UPDATE,
  type AccessReview,
  type AccessReviewItem,
  type ReviewSchedule,
} from '../resources/access-reviews/access-review.js';
import { pathField } from './access-wire.js';
import { kind } from './kinds.js';
import { timestampSchema, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

export const accessReviewV2Schema = z
  .object({
    uid: uidSchema,
    groupUid: uidSchema.meta({ description: 'The group reviewed, with everything below it.' }),
    state: z.enum(['OPEN', 'COMPLETED', 'DEFAULTED']).meta({
      description:
        'OPEN until every item is decided (COMPLETED) or the due time passes (DEFAULTED: the ' +
        'undecided items got the default).',
    }),
    dueTime: timestampSchema,
    defaultDecision: z.enum(['keep', 'expire']).meta({
      description: 'What the due time does to undecided items: keep them, or expire them then.',
    }),
    openedBy: z.string().meta({
      description: 'An identity uid, `admin`, or `system:access-review-schedule`.',
    }),
    itemCount: z.int(),
    decidedCount: z.int(),
    closeTime: timestampSchema.optional(),
    createTime: timestampSchema,
    updateTime: timestampSchema,
  })
  .meta({
    description:
      'A review of the role bindings at and below a group, as they were when it was opened.',
  });

export function accessReviewV2(r: AccessReview): z.infer<typeof accessReviewV2Schema> {
  return {
    uid: r.uid,
    groupUid: r.parentUid,
    state: r.state,
    dueTime: ts(r.dueTime),
    defaultDecision: r.defaultDecision,
    openedBy: r.openedBy,
    itemCount: r.itemCount,
    decidedCount: r.decidedCount,
    ...(r.closeTime ? { closeTime: ts(r.closeTime) } : {}),
    createTime: ts(r.createTime),
    updateTime: ts(r.updateTime),
  };
}

const named = z.object({ uid: uidSchema, name: z.string() });

export const accessReviewItemSchema = z
  .object({
    uid: uidSchema,
    reviewUid: uidSchema,
    bindingUid: uidSchema,
    groupUid: uidSchema.meta({ description: 'The group the binding grants at.' }),
    holder: named.meta({ description: "The binding's identity, as it was at open time." }),
    holderPath: pathField('The holder'),
    role: named,
    rolePath: pathField('The role (a built-in: its name)'),
    groupPath: pathField('The group'),
    lastUsedTime: timestampSchema.optional().meta({
      description: 'When the binding last granted a decision; absent: never since it started.',
    }),
    unused: z.boolean().meta({
      description: 'An unused-access finding (90 days, as access:unused) when the review opened.',
    }),
    expireTime: timestampSchema.optional().meta({ description: "The binding's expiry at open." }),
    decision: z.enum(['keep', 'shorten', 'remove']).optional(),
    decisionExpireTime: timestampSchema.optional().meta({
      description: 'The expiry a shorten set (the due time, for the `expire` default).',
    }),
    reason: z.string().optional(),
    decidedBy: z.string().optional().meta({
      description: 'An identity uid, `admin`, or `system:access-review-default`.',
    }),
    decideTime: timestampSchema.optional(),
  })
  .meta({ description: 'One role binding under review, and what was decided about it.' });

export function accessReviewItemV2(i: AccessReviewItem): z.infer<typeof accessReviewItemSchema> {
  return {
    uid: i.uid,
    reviewUid: i.reviewUid,
    bindingUid: i.bindingUid,
    groupUid: i.groupUid,
    holder: { ...i.holder },
    ...(i.holderPath === undefined ? {} : { holderPath: i.holderPath }),
    role: { ...i.role },
    ...(i.rolePath === undefined ? {} : { rolePath: i.rolePath }),
    ...(i.groupPath === undefined ? {} : { groupPath: i.groupPath }),
    ...(i.lastUsedTime ? { lastUsedTime: ts(i.lastUsedTime) } : {}),
    unused: i.unused,
    ...(i.expireTime ? { expireTime: ts(i.expireTime) } : {}),
    ...(i.decision ? { decision: i.decision } : {}),
    ...(i.decisionExpireTime ? { decisionExpireTime: ts(i.decisionExpireTime) } : {}),
    ...(i.reason !== undefined ? { reason: i.reason } : {}),
    ...(i.decidedBy !== undefined ? { decidedBy: i.decidedBy } : {}),
    ...(i.decideTime ? { decideTime: ts(i.decideTime) } : {}),
  };
}

export const reviewScheduleSchema = z
  .object({
    groupUid: uidSchema,
    everyDays: z.int(),
    dueInDays: z.int(),
    defaultDecision: z.enum(['keep', 'expire']),
    nextOpenTime: timestampSchema,
    setBy: z.string(),
  })
  .meta({ description: "A group's recurring access review." });

export function reviewScheduleV2(s: ReviewSchedule): z.infer<typeof reviewScheduleSchema> {
  return { ...s, nextOpenTime: ts(s.nextOpenTime) };
}

/** The kind's descriptor (wire/kinds.ts), read by its REST and gRPC mounts and the presenter. */
export const ACCESS_REVIEW_KIND = kind({
  type: ACCESS_REVIEW_TYPE,
  name: 'AccessReview',
  plural: 'accessReviews',
  path: '/iam/v2beta1/accessReviews',
  spec: ACCESS_REVIEW_LIST,
  wireSchema: accessReviewV2Schema,
  toWire: accessReviewV2,
  outputOnly: ACCESS_REVIEW_UPDATE.outputOnly,
});
