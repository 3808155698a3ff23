/**
 * The baseline: node:http + pg, no framework, no authentication, no access control. It
 * runs the very SQL (text and bindings) that Arbor sends for each case, captured by
 * bench/queries.ts, as Arbor sends it (named prepared statements where Arbor prepares), with
 * the same pool size (10) and the same shape of work: page query and total (count or
 * maintained counter) in parallel on two connections, rows mapped to the v2 wire shape, and
 * JSON out. The next-page cursor is plain base64url JSON (Arbor seals it with AES-GCM).
 *
 *   GET /case/<name>            page + count (list) or the single-row query (get)
 *   GET /case/<name>?count=0    the page query alone: what the count costs the page
 */
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import pg from 'pg';

export interface Sql {
  sql: string;
  bindings: unknown[];
  /** Set when Arbor runs it as a named prepared statement (src/db/prepared.ts): so does this. */
  name?: string;
}

export interface CapturedCase {
  kind: 'list' | 'get';
  pageSize: number;
  page: Sql;
  /** The total's statement: `count(*)` or the maintained counter; absent when carried. */
  count?: Sql;
  /** The total Arbor answered without a statement (carried by its page token). */
  total?: string;
}

interface GroupRow {
  uid: string;
  name: string;
  description: string;
  resource_limits: Record<string, number>;
  verified: boolean;
  created_at: Date;
  updated_at: Date;
  _k?: unknown;
}

const wire = (g: GroupRow) => ({
  uid: g.uid,
  name: g.name,
  description: g.description,
  resourceLimits: g.resource_limits,
  verified: g.verified,
  createTime: g.created_at.toISOString(),
  updateTime: g.updated_at.toISOString(),
});

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

const cases = JSON.parse(readFileSync(process.env.BENCH_SQL!, 'utf8')) as Record<
  string,
  CapturedCase
>;
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: 10,
  application_name: 'arbor-baseline',
});

/** The statement as Arbor sends it: named (prepared once per connection) or not. */
const run = <R extends pg.QueryResultRow>(q: Sql) =>
  pool.query<R>(
    q.name
      ? { name: q.name, text: q.sql, values: q.bindings }
      : { text: q.sql, values: q.bindings },
  );

async function answer(c: CapturedCase, withCount: boolean): Promise<[number, unknown]> {
  if (c.kind === 'get') {
    const { rows } = await run<GroupRow>(c.page);
    return rows[0] ? [200, wire(rows[0])] : [404, { code: 5, message: 'not found' }];
  }
  const [page, count] = await Promise.all([
    run<GroupRow>(c.page),
    withCount && c.count ? run<{ n: string }>(c.count) : undefined,
  ]);
  const more = page.rows.length > c.pageSize;
  const items = more ? page.rows.slice(0, c.pageSize) : page.rows;
  const last = items[items.length - 1];
  const k = last?._k instanceof Date ? last._k.toISOString() : last?._k;
  return [
    200,
    {
      groups: items.map(wire),
      ...(more && last
        ? { nextPageToken: Buffer.from(JSON.stringify([k, last.uid])).toString('base64url') }
        : {}),
      totalCount: count ? String(count.rows[0]?.n ?? 0) : withCount ? (c.total ?? '') : '',
      skipped: 0,
    },
  ];
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  if (url.pathname === '/healthz') return send(res, 200, { status: 'ok' });
  const c = url.pathname.startsWith('/case/') ? cases[url.pathname.slice(6)] : undefined;
  if (!c) return send(res, 404, { code: 5, message: 'no such case' });
  answer(c, url.searchParams.get('count') !== '0').then(
    ([status, body]) => send(res, status, body),
    (e: Error) => send(res, 500, { code: 13, message: e.message }),
  );
});
server.keepAliveTimeout = 5_000;
server.listen(Number(process.env.PORT), '127.0.0.1');

const stop = () => {
  server.close(() => void pool.end().then(() => process.exit(0)));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
