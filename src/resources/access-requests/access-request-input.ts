import { z } from 'zod';
import { isValidUidp } from '../../core/uidp.js';
import { notBeforeSchema } from '../role-bindings/role-binding-input.js';
import { MAX_DURATION_SECONDS } from './access-request.js';

const uidField = z
  .string({ error: 'must be a uid' })
  .refine(isValidUidp, { error: 'must be a uid path' });

/** How far ahead a request's `notBefore` may lie (docs/access-requests.md). */
export const MAX_START_AHEAD_DAYS = 365;
const MAX_START_AHEAD_MS = MAX_START_AHEAD_DAYS * 86_400_000;

/** What a requester says: the role, for how long (seconds), why, and optionally from when. */
export const accessRequestCreateSchema = z.strictObject({
  roleUid: uidField,
  durationSeconds: z
    .int({ error: 'durationSeconds must be a whole number of seconds' })
    .min(1, { error: 'durationSeconds must be at least 1' })
    .max(MAX_DURATION_SECONDS, {
      error: `durationSeconds must be at most ${MAX_DURATION_SECONDS}`,
    }),
  reason: z
    .string({ error: 'reason is required' })
    .trim()
    .min(1, { error: 'reason is required' })
    .max(1024, { error: 'reason must be at most 1024 characters' }),
  // At most a year ahead: with at most 90 days of duration, an approval can never compute
  // an expiry the service cannot store or show (past 9999-12-31), and nobody files a
  // request that waits for a decade.
  notBefore: notBeforeSchema
    .refine((d) => d.getTime() <= Date.now() + MAX_START_AHEAD_MS, {
      error: `must be at most ${MAX_START_AHEAD_DAYS} days from now`,
    })
    .optional(),
});

/** Which request an approver, denier or canceller decides, and optionally why. */
export const decisionSchema = z.strictObject({
  uid: uidField,
  reason: z
    .string()
    .trim()
    .max(1024, { error: 'reason must be at most 1024 characters' })
    .optional(),
});

/** Which group's policy is asked for. */
export const policyQuerySchema = z.strictObject({ groupUid: uidField });

/** A group's request policy: how many approvers, and how long requests wait. */
export const policySchema = z.strictObject({
  groupUid: uidField,
  approvals: z
    .int({ error: 'approvals must be a whole number' })
    .min(1, { error: 'approvals must be at least 1' })
    .max(10, { error: 'approvals must be at most 10' }),
  timeoutSeconds: z
    .int({ error: 'timeoutSeconds must be a whole number' })
    .min(60, { error: 'timeoutSeconds must be at least 60' })
    .max(30 * 24 * 3600, { error: 'timeoutSeconds must be at most 30 days' })
    .optional(),
});
