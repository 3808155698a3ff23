import type { Advisory } from '../../resources/advisories/advisory.js';
import type { OsvAffected, OsvRecord, OsvSeverity } from '../../resources/advisories/osv.js';
import { ts, tsOpt } from './time.js';

/**
 * An advisory on the wire: the OSV record's fields in the API's camelCase, plus the
 * uniform `uid`/`createTime`/`updateTime` and the derived `severityLevel`. Free-form
 * `*_specific` objects pass through untouched.
 */
export function advisoryV2(a: Advisory) {
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

function affected(a: OsvAffected) {
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
