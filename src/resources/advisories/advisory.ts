import { createHash } from 'node:crypto';
import { parseInstant } from '../../core/instant.js';
import type { ListSpec } from '../../core/list-request.js';
import {
  cvss2BaseScore,
  cvss3BaseScore,
  cvss4BaseScore,
  levelOfScore,
  levelOfText,
  levelOfV2Score,
  type SeverityLevel,
} from './cvss.js';
import type { OsvRecord } from './osv.js';

/**
 * A vulnerability advisory: one OSV record, global (under no group). Visible to every
 * caller that holds `advisories.list` at some group, and to superusers; see
 * AdvisoryService.
 */
export interface Advisory {
  uid: string;
  /** The OSV id (`GHSA-…`, `CVE-…`, `CGA-…`). */
  osvId: string;
  aliases: string[];
  severityLevel: SeverityLevel | null;
  /** The record as imported, unknown fields included. */
  document: OsvRecord;
  /** OSV `published`, else `modified`. */
  createTime: Date;
  /** OSV `modified`. */
  updateTime: Date;
  withdrawTime: Date | null;
}

export const ADVISORY_TYPE = 'vulnerabilities.arbor.dev/Advisory';

/** `created_at` is OSV `published`, `name` the OSV id, `modified` OSV `modified`. */
export const ADVISORY_LIST: ListSpec = {
  kind: 'advisories',
  orderBy: ['uid', 'created_at', 'name', 'modified'],
  defaultOrder: { field: 'uid', direction: 'asc' },
  filters: { id: 'string', package: 'string', ecosystem: 'string', severity: 'string' },
};

/** One affected package as the filters index it: ecosystem, its base before ":", name. */
export interface PackageKey {
  e: string;
  b: string;
  n: string;
}

/** A row as the importer writes it. */
export interface NewAdvisory {
  uid: string;
  osvId: string;
  aliases: string[];
  packages: PackageKey[];
  severityLevel: SeverityLevel | null;
  summary: string;
  document: unknown;
  createTime: Date;
  updateTime: Date;
  withdrawTime: Date | null;
}

/** The uid of an OSV id: sha1, 40 lowercase hex, the same on every installation. */
export function advisoryUid(osvId: string): string {
  return createHash('sha1').update(osvId, 'utf8').digest('hex');
}

/** Millisecond precision, as every stored timestamp (sub-millisecond digits are dropped). */
export function osvTime(s: string): Date {
  // The schema took only instants in range (osv.ts); NaN is not reachable from a record.
  return parseInstant(s) ?? new Date(Number.NaN);
}

/**
 * The severity level of a record: from the highest CVSS v4 score (top level or per
 * affected package), else the highest v3 score, else the highest v2 score, else
 * `database_specific.severity` (GitHub's LOW/MODERATE/HIGH/CRITICAL), else an Ubuntu
 * priority. The newest CVSS version a record carries is its publisher's latest word.
 */
export function severityLevelOf(r: OsvRecord): SeverityLevel | null {
  const all = [...(r.severity ?? []), ...(r.affected ?? []).flatMap((a) => a.severity ?? [])];
  const scores = (type: string, score: (v: string) => number | undefined) =>
    all
      .filter((s) => s.type === type)
      .map((s) => score(s.score))
      .filter((n): n is number => n !== undefined);
  const v4 = scores('CVSS_V4', cvss4BaseScore);
  if (v4.length > 0) return levelOfScore(Math.max(...v4)) ?? null;
  const v3 = scores('CVSS_V3', cvss3BaseScore);
  if (v3.length > 0) return levelOfScore(Math.max(...v3)) ?? null;
  const v2 = scores('CVSS_V2', cvss2BaseScore);
  if (v2.length > 0) return levelOfV2Score(Math.max(...v2)) ?? null;
  const texts = [
    r.database_specific?.severity,
    ...(r.affected ?? []).map((a) => a.database_specific?.severity),
    ...all.filter((s) => s.type === 'Ubuntu').map((s) => s.score),
  ];
  for (const t of texts) {
    const level = levelOfText(t);
    if (level) return level;
  }
  return null;
}

/** Everything the store indexes, extracted from one validated record. */
export function toNewAdvisory(r: OsvRecord, original: unknown): NewAdvisory {
  const packages = new Map<string, PackageKey>();
  for (const a of r.affected ?? []) {
    if (!a.package) continue;
    const { ecosystem: e, name: n } = a.package;
    packages.set(`${e}\0${n}`, { e, b: e.split(':')[0] ?? e, n });
  }
  const modified = osvTime(r.modified);
  return {
    uid: advisoryUid(r.id),
    osvId: r.id,
    aliases: [...new Set(r.aliases ?? [])],
    packages: [...packages.values()],
    severityLevel: severityLevelOf(r),
    summary: r.summary ?? '',
    document: original,
    createTime: r.published ? osvTime(r.published) : modified,
    updateTime: modified,
    withdrawTime: r.withdrawn ? osvTime(r.withdrawn) : null,
  };
}
