import { z } from 'zod';
import { ADVISORY_LIST, ADVISORY_TYPE, type Advisory } from '../resources/advisories/advisory.js';
import {
  osvCreditSchema,
  type OsvAffected,
  type OsvRecord,
  type OsvSeverity,
} from '../resources/advisories/osv.js';
import { kind } from './kinds.js';
import { timestampSchema, ts, tsOpt } from './time.js';
import { uidSchema } from './uid-schema.js';

/** OSV's `*_specific` objects and other members the format leaves open. */
const freeForm = z.record(z.string(), z.unknown());
const severity = z.object({ type: z.string(), score: z.string() });

const affectedSchema = z.object({
  package: z
    .looseObject({ ecosystem: z.string(), name: z.string(), purl: z.string().optional() })
    .optional(),
  severity: z.array(severity).optional(),
  ranges: z.array(
    z.object({
      type: z.string(),
      repo: z.string().optional(),
      events: z.array(
        z.looseObject({
          introduced: z.string().optional(),
          fixed: z.string().optional(),
          lastAffected: z.string().optional(),
          limit: z.string().optional(),
        }),
      ),
      databaseSpecific: freeForm.optional(),
    }),
  ),
  versions: z.array(z.string()),
  ecosystemSpecific: freeForm.optional(),
  databaseSpecific: freeForm.optional(),
});

/**
 * An advisory on the wire: the OSV record's fields in the API's camelCase, plus the
 * uniform `uid`/`createTime`/`updateTime` and the derived `severityLevel`. Free-form
 * `*_specific` objects pass through untouched.
 */
export const advisoryV2Schema = z
  .object({
    uid: uidSchema,
    id: z.string().meta({ description: 'The OSV id (GHSA-…, CVE-…, CGA-…).' }),
    aliases: z.array(z.string()),
    related: z.array(z.union([z.string(), freeForm])).optional(),
    summary: z.string(),
    details: z.string(),
    severity: z.array(severity),
    severityLevel: z.enum(['LOW', 'MEDIUM', 'HIGH', 'CRITICAL']).optional(),
    affected: z.array(affectedSchema),
    references: z.array(z.looseObject({ type: z.string(), url: z.string() })),
    credits: z.array(osvCreditSchema).optional(),
    databaseSpecific: freeForm.optional(),
    schemaVersion: z.string().optional(),
    published: timestampSchema.optional(),
    modified: timestampSchema,
    withdrawn: timestampSchema.optional(),
    createTime: timestampSchema,
    updateTime: timestampSchema,
  })
  .meta({ description: 'A vulnerability advisory: one OSV record.' });
export type AdvisoryV2 = z.infer<typeof advisoryV2Schema>;

export function advisoryV2(a: Advisory): AdvisoryV2 {
  const d: OsvRecord = a.document;
  return {
    uid: a.uid,
    id: a.osvId,
    aliases: a.aliases,
    ...(d.related ? { related: d.related } : {}),
    summary: d.summary ?? '',
    details: d.details ?? '',
    severity: severities(d.severity),
    ...(a.severityLevel ? { severityLevel: a.severityLevel } : {}),
    affected: (d.affected ?? []).map(affected),
    references: d.references ?? [],
    ...(d.credits ? { credits: d.credits } : {}),
    ...(d.database_specific ? { databaseSpecific: d.database_specific } : {}),
    ...(d.schema_version ? { schemaVersion: d.schema_version } : {}),
    ...(d.published ? { published: ts(new Date(Date.parse(d.published))) } : {}),
    modified: ts(a.updateTime),
    ...(a.withdrawTime ? { withdrawn: tsOpt(a.withdrawTime) } : {}),
    createTime: ts(a.createTime),
    updateTime: ts(a.updateTime),
  };
}

function severities(s: OsvSeverity[] | null | undefined) {
  return (s ?? []).map(({ type, score }) => ({ type, score }));
}

function affected(a: OsvAffected): z.infer<typeof affectedSchema> {
  return {
    ...(a.package ? { package: a.package } : {}),
    ...(a.severity ? { severity: severities(a.severity) } : {}),
    ranges: (a.ranges ?? []).map((r) => ({
      type: r.type,
      ...(r.repo ? { repo: r.repo } : {}),
      events: r.events.map((e) =>
        e.last_affected !== undefined ? { lastAffected: e.last_affected } : e,
      ),
      ...(r.database_specific ? { databaseSpecific: r.database_specific } : {}),
    })),
    versions: a.versions ?? [],
    ...(a.ecosystem_specific ? { ecosystemSpecific: a.ecosystem_specific } : {}),
    ...(a.database_specific ? { databaseSpecific: a.database_specific } : {}),
  };
}

/** The kind's descriptor (wire/kinds.ts): read only, written by the import. */
export const ADVISORY_KIND = kind({
  type: ADVISORY_TYPE,
  name: 'Advisory',
  plural: 'advisories',
  path: '/vulnerabilities/v2beta1/advisories',
  spec: ADVISORY_LIST,
  wireSchema: advisoryV2Schema,
  toWire: advisoryV2,
  outputOnly: [],
});
