import type pg from 'pg';
import { Authorizer } from '../src/auth/authorizer.js';
import { ADMIN, type Principal } from '../src/auth/principal.js';
import { parseListRequest, type QueryParams } from '../src/core/list-request.js';
import { PageTokenCodec } from '../src/core/page-token.js';
import { openDatabase } from '../src/db/connect.js';
import { serverSecret } from '../src/db/secrets.js';
import { KnexGrantSource } from '../src/db/stores/grant-source.js';
import { KnexGroupStore } from '../src/db/stores/group-store.js';
import { KnexUnitOfWork } from '../src/db/unit-of-work.js';
import { GROUP_LIST } from '../src/resources/groups/group.js';
import { GroupService } from '../src/resources/groups/group-service.js';
import { ListPager } from '../src/resources/list-pager.js';
import type { Visibility } from '../src/core/visibility.js';
import type { CapturedCase, Sql } from './baseline-server.js';
import { median } from './load.js';
import { NO_AUDIT } from '../src/resources/audit/audit-log.js';

export interface Captured {
  visibility: Visibility;
  grantSql: Sql;
  cases: Record<string, CapturedCase>;
}

/** A page query, or the total beside it: `count(*)` or the maintained counter's row. */
const isCount = (q: Sql) => /count\(\*\)|FROM group_counts/i.test(q.sql);

/**
 * The SQL Arbor runs for each case, taken from knex's `query` events (which also report
 * the prepared statements of src/db/prepared.ts) while the real GroupService answers the
 * very request the load sends: the case's Arbor URL parsed by the route's own parser, the
 * real ListPager (page token decoded with the server's secret from the database, the
 * visibility filter dropped where the anchor implies it, the count carried, shared or read
 * from the counter exactly as the server decides), the real store and the real authorizer
 * for `viewer` (or the admin token, whose lists carry no visibility filter). The pager's
 * shared-count window is off, so a case that counts shows its count query.
 */
export async function captureSql(
  url: string,
  viewer: string,
  arborUrls: Record<string, string>,
  asAdmin = false,
): Promise<Captured> {
  const db = await openDatabase({ url, dataDir: '' });
  const log: Sql[] = [];
  db.knex.on('query', (q: { sql: string; bindings?: unknown[]; name?: string }) =>
    log.push({ sql: q.sql, bindings: q.bindings ?? [], ...(q.name ? { name: q.name } : {}) }),
  );
  try {
    const uow = new KnexUnitOfWork(db.knex);
    const authz = new Authorizer(new KnexGrantSource(uow));
    const codec = new PageTokenCodec(await serverSecret(db.knex, 'page-token'));
    const groups = new GroupService({
      uow,
      groups: new KnexGroupStore(),
      authz,
      pager: new ListPager(codec, { countTtlMs: 0 }),
      audit: NO_AUDIT,
    });
    // A new principal object per request, as the server authenticates one per request.
    const principal = (): Principal =>
      asAdmin ? ADMIN : Object.freeze({ kind: 'identity', uid: viewer } as const);
    log.splice(0);
    const visibility = await authz.visibility(principal(), 'groups.list');
    const grantSql = log.splice(0)[0] ?? { sql: '', bindings: [] };
    const cases: Record<string, CapturedCase> = {};
    for (const [name, arborUrl] of Object.entries(arborUrls)) {
      const u = new URL(arborUrl);
      const getUid = /^\/iam\/v2beta1\/groups\/(.+)$/.exec(u.pathname)?.[1];
      let pageSize = 1;
      let total: string | undefined;
      if (getUid !== undefined) {
        await groups.get(principal(), decodeURIComponent(getUid));
      } else {
        const req = parseListRequest(Object.fromEntries(u.searchParams) as QueryParams, GROUP_LIST);
        pageSize = req.pageSize;
        total = (await groups.list(principal(), req)).totalCount;
      }
      const ran = log.splice(0).filter((q) => q.sql !== grantSql.sql);
      const count = ran.find(isCount);
      const page = ran.find((q) => !isCount(q));
      if (!page || ran.length > 2) throw new Error(`capture ${name}: ${ran.length} statements`);
      cases[name] = {
        kind: getUid === undefined ? 'list' : 'get',
        pageSize,
        page,
        ...(count ? { count } : total !== undefined ? { total } : {}),
      };
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
