import { z } from 'zod';
import { isValidUidp } from '../../core/uidp.js';
import { instantSchema } from '../instant-input.js';
import { MAX_DUE_DAYS } from './access-review.js';

const DAY_MS = 86_400_000;

const uidField = z
  .string({ error: 'must be a uid' })
  .refine(isValidUidp, { error: 'must be a uid path' });

const defaultField = z.enum(['keep', 'expire'], { error: 'must be keep or expire' });

/** An instant in the future, at most MAX_DUE_DAYS ahead (checked against the clock at parse). */
function aheadSchema(field: string) {
  return instantSchema()
    .refine((d) => d.getTime() > Date.now(), { error: `${field} must be in the future` })
    .refine((d) => d.getTime() <= Date.now() + MAX_DUE_DAYS * DAY_MS, {
      error: `${field} must be at most ${MAX_DUE_DAYS} days from now`,
    });
}

/** Open a review at the group in the path: when it is due and what its due time does. */
export const reviewOpenSchema = z.strictObject({
  dueTime: aheadSchema('dueTime'),
  defaultDecision: defaultField,
});

/** One item's decision: keep, shorten (to `expireTime`), or remove; always with a reason. */
export const reviewDecideSchema = z
  .strictObject({
    itemUid: uidField,
    decision: z.enum(['keep', 'shorten', 'remove'], {
      error: 'must be keep, shorten or remove',
    }),
    expireTime: aheadSchema('expireTime').optional(),
    reason: z
      .string({ error: 'reason is required' })
      .trim()
      .min(1, { error: 'reason is required' })
      .max(1024, { error: 'reason must be at most 1024 characters' }),
  })
  .refine((d) => (d.decision === 'shorten') === (d.expireTime !== undefined), {
    path: ['expireTime'],
    error: 'expireTime is required for shorten and taken by nothing else',
  });

/** Which group's schedule is asked for. */
export const scheduleQuerySchema = z.strictObject({ groupUid: uidField });

/** A group's recurring review; `everyDays: 0` removes it. */
export const scheduleSetSchema = z
  .strictObject({
    groupUid: uidField,
    everyDays: z
      .int({ error: 'everyDays must be a whole number' })
      .min(0, { error: 'everyDays must be at least 1 (0 removes the schedule)' })
      .max(MAX_DUE_DAYS, { error: `everyDays must be at most ${MAX_DUE_DAYS}` }),
    dueInDays: z
      .int({ error: 'dueInDays must be a whole number' })
      .min(1, { error: 'dueInDays must be at least 1' })
      .max(MAX_DUE_DAYS, { error: `dueInDays must be at most ${MAX_DUE_DAYS}` })
      .optional(),
    defaultDecision: defaultField.optional(),
  })
  .refine((s) => s.everyDays === 0 || s.dueInDays === undefined || s.dueInDays <= s.everyDays, {
    path: ['dueInDays'],
    error: 'dueInDays must be at most everyDays (one review is due before the next opens)',
  });
