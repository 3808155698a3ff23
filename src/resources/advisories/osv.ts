import { z } from 'zod';
import { INSTANT_RANGE_PROBLEM } from '../../core/instant.js';
import { instantProblem } from '../instant-input.js';
import { cvss3BaseScore, cvss4BaseScore } from './cvss.js';

/**
 * The OSV format (https://ossf.github.io/osv-schema/), as imported. Known fields are
 * checked against the published JSON schema; unknown fields are kept (the format grows
 * compatibly), and `*_specific` objects are free-form by definition.
 */

/** `<DB>-<ENTRYID>`: GHSA-…, CVE-…, PYSEC-…, RHSA-2024:1234, openSUSE-SU-…, CGA-…. */
export const OSV_ID_PATTERN = /^[A-Za-z][A-Za-z0-9]*-[A-Za-z0-9._:+-]+$/;

// Kept as text (the record is stored as given); read as a Date by osvTime.
const timestamp = z.string().refine((s) => instantProblem(s) === undefined, {
  error: INSTANT_RANGE_PROBLEM,
});
const text = z.string().max(255).min(1);
const freeForm = z.looseObject({});

export const SEVERITY_TYPES = ['CVSS_V2', 'CVSS_V3', 'CVSS_V4', 'Ubuntu'] as const;

const severity = z
  .looseObject({ type: z.enum(SEVERITY_TYPES), score: z.string().min(1) })
  .superRefine((s, ctx) => {
    if (s.type === 'CVSS_V3' && cvss3BaseScore(s.score) === undefined) {
      ctx.addIssue({ code: 'custom', path: ['score'], message: 'must be a CVSS v3 vector' });
    }
    if (s.type === 'CVSS_V4' && cvss4BaseScore(s.score) === undefined) {
      ctx.addIssue({ code: 'custom', path: ['score'], message: 'must be a CVSS v4 vector' });
    }
  });

const EVENT_KEYS = ['introduced', 'fixed', 'last_affected', 'limit'] as const;
const event = z
  .looseObject({
    introduced: z.string().optional(),
    fixed: z.string().optional(),
    last_affected: z.string().optional(),
    limit: z.string().optional(),
  })
  .refine((e) => EVENT_KEYS.filter((k) => e[k] !== undefined).length === 1, {
    error: `must have exactly one of ${EVENT_KEYS.join(', ')}`,
  });

const range = z
  .looseObject({
    type: z.enum(['GIT', 'SEMVER', 'ECOSYSTEM']),
    repo: z.string().optional(),
    events: z.array(event).min(1),
    database_specific: freeForm.optional(),
  })
  .superRefine((r, ctx) => {
    if (r.type === 'GIT' && !r.repo) {
      ctx.addIssue({ code: 'custom', path: ['repo'], message: 'is required for GIT ranges' });
    }
    if (!r.events.some((e) => e.introduced !== undefined)) {
      ctx.addIssue({ code: 'custom', path: ['events'], message: 'must contain an "introduced"' });
    }
    if (r.events.some((e) => e.fixed) && r.events.some((e) => e.last_affected)) {
      ctx.addIssue({
        code: 'custom',
        path: ['events'],
        message: 'cannot mix "fixed" and "last_affected"',
      });
    }
  });

const affected = z.looseObject({
  package: z
    .looseObject({ ecosystem: text, name: z.string().min(1), purl: z.string().optional() })
    .optional(),
  severity: z.array(severity).nullish(),
  ranges: z.array(range).optional(),
  versions: z.array(z.string()).optional(),
  ecosystem_specific: freeForm.optional(),
  database_specific: freeForm.optional(),
});

/** Who is credited for an advisory; the API's wire form shows it as imported. */
export const osvCreditSchema = z.looseObject({
  name: z.string(),
  contact: z.array(z.string()).optional(),
  type: z.string().optional(),
});

export const REFERENCE_TYPES = [
  'ADVISORY',
  'ARTICLE',
  'DETECTION',
  'DISCUSSION',
  'REPORT',
  'FIX',
  'INTRODUCED',
  'GIT',
  'PACKAGE',
  'EVIDENCE',
  'WEB',
] as const;

export const osvRecordSchema = z.looseObject({
  schema_version: z.string().optional(),
  id: z
    .string()
    .max(255)
    .regex(OSV_ID_PATTERN, { error: `must match "${OSV_ID_PATTERN.source}"` }),
  modified: timestamp,
  published: timestamp.optional(),
  withdrawn: timestamp.optional(),
  aliases: z.array(text).nullish(),
  related: z.array(z.union([z.string(), freeForm])).nullish(),
  upstream: z.array(z.string()).nullish(),
  summary: z.string().optional(),
  details: z.string().optional(),
  severity: z.array(severity).nullish(),
  affected: z.array(affected).nullish(),
  references: z
    .array(z.looseObject({ type: z.enum(REFERENCE_TYPES), url: z.string().min(1) }))
    .nullish(),
  credits: z.array(osvCreditSchema).nullish(),
  database_specific: freeForm.optional(),
});

/** One validated OSV record (the parsed original, unknown fields included). */
export type OsvRecord = z.infer<typeof osvRecordSchema>;
export type OsvAffected = z.infer<typeof affected>;
export type OsvSeverity = z.infer<typeof severity>;
