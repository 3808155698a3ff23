import { z } from 'zod';
import { invalidField } from '../../core/rpc-error.js';
import { INSTANT_RANGE_PROBLEM, parseInstant } from '../../core/instant.js';
import { instantProblem } from '../instant-input.js';
import { descriptionSchema, nameSchema } from '../validate.js';
import { issuerPatternProblem, issuerProblem, jwksProblem, patternProblem } from './claim-match.js';
import { STATIC_KEYS_MAX_LIFETIME_MS } from './identity.js';

/** A string whose every problem is reported by `problem` as one custom issue. */
function checked(max: number | undefined, problem: (s: string) => string | undefined) {
  const str = z.string({ error: 'must be a string' });
  return (
    max === undefined ? str : str.max(max, { error: `must be at most ${max} characters` })
  ).superRefine((s, ctx) => {
    const why = problem(s);
    if (why !== undefined) ctx.addIssue({ code: 'custom', message: why });
  });
}

const text = (max: number) =>
  checked(max, (s) => (s.trim() === '' ? 'must not be empty' : undefined));

/** Run a oneof check even when some member failed, so that every violation is reported. */
const ALWAYS = {
  when: (p: { value: unknown }) => typeof p.value === 'object' && p.value !== null,
};

/** Report when neither or both of a oneof pair is set, on the field the client should fix. */
function oneOf(v: Record<string, unknown>, a: string, b: string, ctx: z.RefinementCtx, req = true) {
  const has = (k: string) => v[k] !== undefined && v[k] !== null;
  if (has(a) && has(b)) {
    ctx.addIssue({ code: 'custom', path: [b], message: `cannot be set together with ${a}` });
  } else if (req && !has(a) && !has(b)) {
    ctx.addIssue({ code: 'custom', path: [a], message: `one of ${a} or ${b} is required` });
  }
}

/**
 * The identity input schemas. They depend on configuration (whether `http://` issuers
 * are allowed), so a service builds them once at construction.
 */
export function identitySchemas(allowInsecureIssuers: boolean) {
  const issuer = checked(2048, (s) => issuerProblem(s, allowInsecureIssuers));
  const pattern = checked(undefined, patternProblem);
  // An issuer pattern is used before the token is verified: it must fix scheme and host.
  const issuerPattern = checked(undefined, (s) => issuerPatternProblem(s, allowInsecureIssuers));
  const claimMatch = z
    .strictObject({
      issuer: issuer.optional(),
      issuerPattern: issuerPattern.optional(),
      subject: text(1024).optional(),
      subjectPattern: pattern.optional(),
      audience: text(1024).optional(),
      claims: z
        .record(text(256), z.string({ error: 'must be a string' }).max(1024))
        .refine((o) => Object.keys(o).length <= 32, { error: 'at most 32 claims' })
        .optional(),
    })
    .superRefine((cm, ctx) => {
      oneOf(cm, 'issuer', 'issuerPattern', ctx);
      oneOf(cm, 'subject', 'subjectPattern', ctx);
    }, ALWAYS);
  const staticKeys = z.strictObject({
    issuer,
    subject: text(1024),
    issuerKeys: checked(64 * 1024, jwksProblem),
    expirationTime: checked(64, instantProblem).optional(),
  });
  const create = z
    .strictObject({
      name: nameSchema,
      description: descriptionSchema.optional(),
      claimMatch: claimMatch.optional(),
      staticKeys: staticKeys.optional(),
    })
    .superRefine((v, ctx) => oneOf(v, 'claimMatch', 'staticKeys', ctx), ALWAYS);
  // `null` is what a field mask resets a relationship to; the merged result is checked
  // for exactly one relationship by the service.
  const patch = z.strictObject({
    name: nameSchema.optional(),
    description: descriptionSchema.optional(),
    claimMatch: claimMatch.nullable().optional(),
    staticKeys: staticKeys.nullable().optional(),
  });
  return { create, patch, claimMatch };
}

export type IdentitySchemas = ReturnType<typeof identitySchemas>;
/**
 * The expiry of static keys: the requested time, or 365 days after `createdAt` by default.
 *
 * @throws RpcError INVALID_ARGUMENT on `staticKeys.expirationTime` when the time has
 *   passed or lies more than 365 days after `createdAt`.
 */
export function resolveExpiration(raw: string | undefined, createdAt: Date, now: Date): Date {
  const max = new Date(createdAt.getTime() + STATIC_KEYS_MAX_LIFETIME_MS);
  if (raw === undefined) return max;
  // Timestamps are kept to the millisecond, like every other time in the service.
  const t = parseInstant(raw);
  if (t === undefined) throw invalidField('staticKeys.expirationTime', INSTANT_RANGE_PROBLEM);
  if (t.getTime() <= now.getTime()) {
    throw invalidField('staticKeys.expirationTime', 'must be in the future');
  }
  if (t.getTime() > max.getTime()) {
    throw invalidField(
      'staticKeys.expirationTime',
      `must be at most 365 days after the identity was created (${max.toISOString()})`,
    );
  }
  return t;
}
