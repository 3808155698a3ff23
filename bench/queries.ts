import type pg from 'pg';
import { Authorizer } from '../src/auth/authorizer.js';
import { ADMIN } from '../src/auth/principal.js';
import { openDatabase } from '../src/db/connect.js';
import { KnexGrantSource } from '../src/db/stores/grant-source.js';
import { KnexGroupStore } from '../src/db/stores/group-store.js';
import { KnexUnitOfWork } from '../src/db/unit-of-work.js';
import type { PageQuery, SortKey, Visibility } from '../src/resources/list-types.js';
import type { Tx } from '../src/resources/tx.js';
import type { CapturedCase, Sql } from './baseline-server.js';
import { median } from './load.js';
import { PAGE_SIZE } from './scale.js';

export interface ListDef {
  kind: 'list';
  uidp: PageQuery['uidp'];
  order: 'name' | 'created_at';
  after?: SortKey;
}
export type CaseDef = ListDef | { kind: 'get'; uid: string };

export interface Captured {
  visibility: Visibility;
  grantSql: Sql;
  cases: Record<string, CapturedCase>;
}

/**
 * The SQL Arbor runs for each case, taken from knex's own `query` events while the real
 * store (KnexGroupStore) and the real authorizer answer the same request for `viewer`
 * (or for the admin token, whose lists carry no visibility filter).
 */
export async function captureSql(
  url: string,
  viewer: string,
  defs: Record<string, CaseDef>,
  asAdmin = false,
): Promise<Captured> {
  const db = await openDatabase({ url, dataDir: '' });
  const log: Sql[] = [];
  db.knex.on('query', (q: { sql: string; bindings?: unknown[] }) =>
    log.push({ sql: q.sql, bindings: q.bindings ?? [] }),
  );
  try {
    const authz = new Authorizer(new KnexGrantSource(new KnexUnitOfWork(db.knex)));
    const principal = asAdmin ? ADMIN : ({ kind: 'identity', uid: viewer } as const);
    const visibility = await authz.visibility(principal, 'groups.list');
    const grantSql = log.splice(0)[0] ?? { sql: '', bindings: [] };
    const store = new KnexGroupStore();
    const tx = db.knex as unknown as Tx;
    const cases: Record<string, CapturedCase> = {};
    for (const [name, d] of Object.entries(defs)) {
      if (d.kind === 'get') {
        await store.get(tx, d.uid);
        cases[name] = { kind: 'get', pageSize: 1, page: log.splice(0)[0]! };
        continue;
      }
      await store.list(tx, {
        uidp: d.uidp,
        filters: {},
        order: { field: d.order, direction: 'asc' },
        ...(d.after ? { after: d.after } : {}),
        skip: 0,
        pageSize: PAGE_SIZE,
        visibility,
      });
      const both = log.splice(0);
      const count = both.find((q) => /count\(\*\)/.test(q.sql));
      const page = both.find((q) => q !== count);
      if (both.length !== 2 || !page || !count) throw new Error(`capture ${name}`);
      cases[name] = { kind: 'list', pageSize: PAGE_SIZE, page, count };
    }
    return { visibility, grantSql, cases };
  } finally {
    await db.close();
  }
}

export interface PlanCheck {
  query: string;
  executionMs: number;
  seqScan: boolean;
  /** Rows fed into the largest Sort node (0 when there is no Sort). */
  sortRows: number;
  plan: string;
}

/** EXPLAIN (ANALYZE, BUFFERS) of each SQL, after one warming execution. */
export async function explain(c: pg.ClientBase, name: string, q: Sql): Promise<PlanCheck> {
  await c.query(q.sql, q.bindings);
  const { rows } = await c.query<{ 'QUERY PLAN': string }>(
    `EXPLAIN (ANALYZE, BUFFERS) ${q.sql}`,
    q.bindings,
  );
  const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
  // A Sort node's input is the next node down (its child): that is how much it had to sort.
  let sortRows = 0;
  let inSort = false;
  for (const line of plan.split('\n').map((l) => l.trim())) {
    if (/^(?:->\s+)?(?:Incremental )?Sort\s+\(/.test(line)) inSort = true;
    else if (inSort && line.startsWith('->')) {
      const m = /actual time=[\d.]+\.\.[\d.]+ rows=(\d+)/.exec(line);
      sortRows = Math.max(sortRows, Number(m?.[1] ?? 0));
      inSort = false;
    }
  }
  const exec = /Execution Time: ([\d.]+) ms/.exec(plan);
  return {
    query: name,
    executionMs: exec ? Number(exec[1]) : NaN,
    seqScan: /Seq Scan/.test(plan),
    sortRows,
    plan,
  };
}

/** Median and p90 client round trip of one query run serially (after 5 warm-ups). */
export async function timeSql(c: pg.ClientBase, q: Sql, n = 25) {
  for (let i = 0; i < 5; i++) await c.query(q.sql, q.bindings);
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await c.query(q.sql, q.bindings);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { medianMs: median(ms), p90Ms: ms[Math.floor(n * 0.9)]! };
}
