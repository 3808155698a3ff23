import { z } from 'zod';
import { instantSchema } from '../instant-input.js';
import { MAX_TTL_MS, MIN_TTL_MS } from './group-invite.js';

const DURATION = /^(\d+(?:\.\d+)?)(s|m|h)$/;
const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000 } as const;

/**
 * A protobuf/Go duration in one unit (`3600s`, `1.5h`, `30m`) as whole milliseconds, or
 * undefined when it is not one.
 */
export function parseTtl(s: string): number | undefined {
  const m = DURATION.exec(s);
  if (!m) return undefined;
  return Math.round(Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]);
}

/** Input only: consumed to compute `expirationTime`, never stored or returned. */
const ttlSchema = z.string({ error: 'ttl is required' }).transform((s, ctx) => {
  const ms = parseTtl(s);
  if (ms === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: 'ttl must be a duration such as "3600s", "30m" or "168h"',
    });
    return z.NEVER;
  }
  if (ms < MIN_TTL_MS || ms > MAX_TTL_MS) {
    ctx.addIssue({ code: 'custom', message: 'ttl must be between 60s and 720h (30 days)' });
    return z.NEVER;
  }
  return ms;
});

/** Create body; the group is in the path. `email`, when given, is who may redeem. */
export const groupInviteCreateSchema = z.strictObject({
  roleUid: z.string({ error: 'roleUid is required' }).min(1, { error: 'roleUid is required' }),
  email: z
    .email({ error: 'email must be an email address' })
    .max(254, { error: 'email must be at most 254 characters' })
    .optional(),
  ttl: ttlSchema,
  singleUse: z.boolean({ error: 'singleUse must be a boolean' }).optional(),
});
/** Update body after the mask is applied: a new role, a new expiry (60 s to 30 days ahead). */
export const groupInviteUpdateSchema = z.strictObject({
  roleUid: z
    .string({ error: 'roleUid must be a string' })
    .min(1, { error: 'roleUid is required' })
    .optional(),
  expirationTime: instantSchema()
    .refine(
      (d) => d.getTime() - Date.now() >= MIN_TTL_MS && d.getTime() - Date.now() <= MAX_TTL_MS,
      { error: 'expirationTime must be between 60s and 720h (30 days) from now' },
    )
    .optional(),
});
export const redeemSchema = z.strictObject({
  code: z.string({ error: 'code is required' }).min(1, { error: 'code is required' }).max(512, {
    error: 'code is not an invite code',
  }),
});
