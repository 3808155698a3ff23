import { z } from 'zod';
import { isCapability, type Capability } from '../../auth/capabilities.js';
import {
  MAX_CLAIM_NAME_CHARS,
  MAX_CLAIM_VALUE_CHARS,
  MAX_UPSTREAM_CLAIMS,
  MAX_UPSTREAM_CLAIMS_BYTES,
} from '../../auth/upstream-claims.js';
import { isValidUidp } from '../../core/uidp.js';
import { MAX_BATCH_CHECKS, type CheckRequest } from './access.js';

const uid = (name: string) =>
  z
    .string({ error: `${name} must be a uid` })
    .refine(isValidUidp, { error: `${name} must be a uid path` });

export const capabilitySchema = z
  .string({ error: 'capability is required' })
  .refine((s): s is Capability => isCapability(s), { error: 'capability is not a capability' })
  .transform((s) => s as Capability);

/** As long as a registry repository path or an object key may be: the names conditions read. */
export const MAX_ASKED_RESOURCE_TYPE_CHARS = 256;
export const MAX_ASKED_RESOURCE_NAME_CHARS = 1024;

const askedResourceSchema = z
  .strictObject({
    type: z
      .string({ error: 'resource.type must be a string' })
      .max(MAX_ASKED_RESOURCE_TYPE_CHARS, {
        error: `resource.type must be at most ${MAX_ASKED_RESOURCE_TYPE_CHARS} characters`,
      })
      .meta({ description: 'resource.type as the condition reads it (e.g. `repository`).' }),
    name: z
      .string({ error: 'resource.name must be a string' })
      .max(MAX_ASKED_RESOURCE_NAME_CHARS, {
        error: `resource.name must be at most ${MAX_ASKED_RESOURCE_NAME_CHARS} characters`,
      })
      .meta({ description: 'resource.name as the condition reads it (e.g. a repository path).' }),
  })
  .meta({
    description:
      'The resource of the request the check asks about: each conditional binding is ' +
      'evaluated with it as `resource`. A question only: it grants nothing. Absent: "" and "".',
  });

const claimValueSchema = z.union(
  [
    z.string().max(MAX_CLAIM_VALUE_CHARS, {
      error: `a claim's string is at most ${MAX_CLAIM_VALUE_CHARS} characters`,
    }),
    z.boolean(),
    z.number().refine(Number.isFinite, { error: 'a claim number must be finite' }),
  ],
  { error: 'a claim is a string, a boolean or a number' },
);

/** The JSON bytes one claim adds (as `upstream-claims.ts` counts a token's). */
const claimBytes = (name: string, v: unknown): number =>
  Buffer.byteLength(JSON.stringify(name)) + Buffer.byteLength(JSON.stringify(v)) + 2;

/**
 * Claims as an API token carries them (src/auth/upstream-claims.ts), with the same bounds:
 * flat dotted names to scalars, at most 64 claims, names of at most 128 characters,
 * strings of at most 256, 4 KiB of JSON. Refused whole when over a bound (never trimmed:
 * a trimmed value could satisfy a `startsWith` the asked one does not).
 */
const askedClaimsSchema = z
  .record(z.string(), claimValueSchema, { error: 'claims must be an object of claims' })
  .superRefine((claims, ctx) => {
    const names = Object.keys(claims);
    if (names.length > MAX_UPSTREAM_CLAIMS)
      ctx.addIssue({
        code: 'custom',
        message: `claims may hold at most ${MAX_UPSTREAM_CLAIMS} claims`,
      });
    let bytes = 2;
    for (const name of names) {
      if (name.length === 0 || name.length > MAX_CLAIM_NAME_CHARS)
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `a claim name is 1 to ${MAX_CLAIM_NAME_CHARS} characters`,
        });
      bytes += claimBytes(name, claims[name]);
    }
    if (bytes > MAX_UPSTREAM_CLAIMS_BYTES)
      ctx.addIssue({
        code: 'custom',
        message: `claims may be at most ${MAX_UPSTREAM_CLAIMS_BYTES} bytes of JSON`,
      });
  })
  .meta({
    description:
      'The upstream claims of the request the check asks about, as an API token carries ' +
      'them (flat dotted names to strings, booleans or numbers; at most 64 claims and 4 KiB): ' +
      'each conditional binding is evaluated with them as `token.claims`. A question only: ' +
      'it grants nothing. Absent: none.',
  });

export const checkSchema = z.strictObject({
  identityUid: uid('identityUid').optional(),
  capability: capabilitySchema,
  groupUid: uid('groupUid'),
  resource: askedResourceSchema.optional(),
  claims: askedClaimsSchema.optional(),
});

export const batchCheckSchema = z.strictObject({
  checks: z
    .array(checkSchema, { error: 'checks must be an array' })
    .min(1, { error: 'checks must hold at least one check' })
    .max(MAX_BATCH_CHECKS, { error: `checks may hold at most ${MAX_BATCH_CHECKS} checks` }),
});

const CHECK_FIELDS = new Set(['identityUid', 'capability', 'groupUid']);

/**
 * A check body that `checkSchema` accepts as it is, read without zod (the check is a hot
 * path); undefined for anything else, which `parseInput(checkSchema, …)` then refuses with
 * its field violations. Every field is a uid path or a known capability, so none can hold
 * the text `parseInput` refuses first.
 */
export function plainCheck(body: Record<string, unknown>): CheckRequest | undefined {
  for (const key of Object.keys(body)) if (!CHECK_FIELDS.has(key)) return undefined;
  const { identityUid, capability, groupUid } = body;
  if (typeof capability !== 'string' || !isCapability(capability)) return undefined;
  if (typeof groupUid !== 'string' || !isValidUidp(groupUid)) return undefined;
  if (identityUid === undefined) return { capability, groupUid };
  if (typeof identityUid !== 'string' || !isValidUidp(identityUid)) return undefined;
  return { identityUid, capability, groupUid };
}
