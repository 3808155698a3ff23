import type { Knex } from 'knex';
import type { SeverityLevel } from '../../resources/advisories/cvss.js';
import type { Advisory, NewAdvisory } from '../../resources/advisories/advisory.js';
import type { AdvisoryStore } from '../../resources/advisories/advisory-store.js';
import type { OsvRecord } from '../../resources/advisories/osv.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import type { Tx } from '../../resources/tx.js';
import { keysetPage, whereVisible } from '../keyset.js';
import { kx } from '../unit-of-work.js';

interface AdvisoryRow {
  uid: string;
  name: string;
  aliases: string[];
  severity: SeverityLevel | null;
  document: OsvRecord;
  created_at: Date;
  updated_at: Date;
  withdrawn_at: Date | null;
}

const COLUMNS = [
  'uid',
  'name',
  'aliases',
  'severity',
  'document',
  'created_at',
  'updated_at',
  'withdrawn_at',
].map((c) => `a.${c}`);

const SORT = {
  uid: 'a.uid',
  name: 'a.name',
  created_at: 'a.created_at',
  modified: 'a.updated_at',
};

/** Rows per INSERT: 11 parameters each, far below the protocol's 65535. */
const BATCH = 500;

function toAdvisory(r: AdvisoryRow): Advisory {
  return {
    uid: r.uid,
    osvId: r.name,
    aliases: r.aliases,
    severityLevel: r.severity,
    document: r.document,
    createTime: r.created_at,
    updateTime: r.updated_at,
    withdrawTime: r.withdrawn_at,
  };
}

/** A PostgreSQL array literal, so text[] values travel as one text parameter on both drivers. */
function textArray(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}

/** `packages @> [{…}]`: one affected entry holding every given key (GIN jsonb_path_ops). */
function wherePackage(qb: Knex.QueryBuilder, f: Readonly<Record<string, string>>): void {
  const pkg: Record<string, string> = {};
  if (f.package !== undefined) pkg.n = f.package;
  if (f.ecosystem === undefined) {
    if (f.package !== undefined) qb.whereRaw('a.packages @> ?::jsonb', [JSON.stringify([pkg])]);
    return;
  }
  // `Debian` matches `Debian:12` through the base name; `Debian:12` matches exactly.
  const exact = JSON.stringify([{ ...pkg, e: f.ecosystem }]);
  const base = JSON.stringify([{ ...pkg, b: f.ecosystem }]);
  qb.where((w) =>
    w.whereRaw('a.packages @> ?::jsonb', [exact]).orWhereRaw('a.packages @> ?::jsonb', [base]),
  );
}

export class KnexAdvisoryStore implements AdvisoryStore {
  async get(tx: Tx, uid: string): Promise<Advisory | undefined> {
    const row = (await kx(tx)('advisories as a').where('a.uid', uid).first(COLUMNS)) as
      AdvisoryRow | undefined;
    return row && toAdvisory(row);
  }

  async list(tx: Tx, q: PageQuery): Promise<StorePage<Advisory>> {
    const base = kx(tx)('advisories as a');
    const f = q.filters;
    if (f.id !== undefined) {
      const id = f.id;
      base.where((w) => w.where('a.name', id).orWhereRaw('a.aliases @> ARRAY[?]::text[]', [id]));
    }
    wherePackage(base, f);
    if (f.severity !== undefined) base.where('a.severity', f.severity);
    whereVisible(base, 'a.uid', q.visibility);
    const page = await keysetPage<AdvisoryRow>(base, { sort: SORT, uid: 'a.uid' }, q, (qb) =>
      qb.select(COLUMNS),
    );
    return { ...page, items: page.items.map(toAdvisory) };
  }

  async modifiedOf(tx: Tx, uids: readonly string[]): Promise<Map<string, Date>> {
    const out = new Map<string, Date>();
    for (let i = 0; i < uids.length; i += BATCH * 10) {
      const rows = (await kx(tx)('advisories')
        .whereIn('uid', uids.slice(i, i + BATCH * 10))
        .select('uid', 'updated_at')) as Array<{ uid: string; updated_at: Date }>;
      for (const r of rows) out.set(r.uid, r.updated_at);
    }
    return out;
  }

  async upsert(tx: Tx, rows: readonly NewAdvisory[]): Promise<Set<string>> {
    const k = kx(tx);
    const written = new Set<string>();
    for (let i = 0; i < rows.length; i += BATCH) {
      const values = rows.slice(i, i + BATCH).map((r) => ({
        uid: r.uid,
        name: r.osvId,
        aliases: k.raw('?::text[]', [textArray(r.aliases)]),
        packages: k.raw('?::jsonb', [JSON.stringify(r.packages)]),
        severity: r.severityLevel,
        summary: r.summary,
        document: k.raw('?::jsonb', [JSON.stringify(r.document)]),
        created_at: r.createTime,
        updated_at: r.updateTime,
        withdrawn_at: r.withdrawTime,
        imported_at: k.fn.now(),
      }));
      const merge = Object.keys(values[0] ?? {}).filter((c) => c !== 'uid');
      const res = (await k('advisories')
        .insert(values)
        .onConflict('uid')
        .merge(merge)
        // Never overwrite a newer record, and an unchanged one is not rewritten at all.
        .where('advisories.updated_at', '<', k.ref('excluded.updated_at'))
        .returning('uid')) as Array<{ uid: string }>;
      for (const r of res) written.add(r.uid);
    }
    return written;
  }
}
