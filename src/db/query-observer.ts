import { SpanStatusCode, type Span } from '@opentelemetry/api';
import type { Knex } from 'knex';
import { startChildSpan } from '../tracing/spans.js';

interface QueryEvent {
  __knexQueryUid?: string;
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  max: number;
}

/**
 * Calls `done(seconds, ok)` once per query that Knex runs, from its query events; the
 * rest of the code base stays unaware. (Queries inside a transaction report the same.)
 */
export function observeQueries(knex: Knex, done: (seconds: number, ok: boolean) => void): void {
  const started = new Map<string, number>();
  knex.on('query', (q: QueryEvent) => {
    if (q.__knexQueryUid) started.set(q.__knexQueryUid, performance.now());
  });
  const finish = (ok: boolean) => (_r: unknown, q: QueryEvent) => {
    const uid = q?.__knexQueryUid;
    const t0 = uid === undefined ? undefined : started.get(uid);
    if (uid === undefined || t0 === undefined) return;
    started.delete(uid);
    done((performance.now() - t0) / 1000, ok);
  };
  knex.on('query-response', finish(true));
  knex.on('query-error', finish(false));
}

/** The connection pool's counts now, or undefined before the pool exists or after close. */
export function poolStats(
  knex: Knex,
): { used: number; free: number; pending: number; max: number } | undefined {
  const pool = (knex.client as { pool?: TarnPool }).pool;
  if (!pool) return undefined;
  return {
    used: pool.numUsed(),
    free: pool.numFree(),
    pending: pool.numPendingAcquires(),
    max: pool.max,
  };
}

interface TracedQuery extends QueryEvent {
  sql?: string;
}

/**
 * A CLIENT span per SQL statement Knex runs (semantic conventions, database): started by
 * its `query` event, which Knex emits in the caller's async context, so the span is a child
 * of the request's; ended by the response or the error. The statement's text is the
 * parameterised SQL Knex sends (`$1`, `?`): bound values are never on a span. PGlite is
 * PostgreSQL too and is traced the same way.
 */
export function traceQueries(knex: Knex): void {
  const open = new Map<string, Span>();
  knex.on('query', (q: TracedQuery) => {
    const uid = q.__knexQueryUid;
    if (uid === undefined) return;
    const sql = typeof q.sql === 'string' ? q.sql : '';
    const operation = () => /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase() ?? 'QUERY';
    const span = startChildSpan(operation, () => ({
      'db.system.name': 'postgresql',
      'db.operation.name': operation(),
      'db.query.text': sql.length > 2000 ? sql.slice(0, 2000) : sql,
    }));
    if (span !== undefined) open.set(uid, span);
  });
  const finish = (ok: boolean) => (r: unknown, q: QueryEvent) => {
    const uid = q?.__knexQueryUid;
    const span = uid === undefined ? undefined : open.get(uid);
    if (uid === undefined || span === undefined) return;
    open.delete(uid);
    if (!ok) {
      const code = (r as { code?: unknown } | undefined)?.code;
      span.setAttribute('error.type', typeof code === 'string' ? code : 'Error');
      if (typeof code === 'string') span.setAttribute('db.response.status_code', code);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  };
  knex.on('query-response', finish(true));
  knex.on('query-error', finish(false));
}
