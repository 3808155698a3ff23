import { writeFileSync } from 'node:fs';
import type pg from 'pg';
import type { CapturedCase } from './baseline-server.js';
import { getJson } from './fixtures.js';
import { explain, timeSql, type PlanCheck } from './queries.js';

type Log = (m: string) => void;

/**
 * Ask both servers once per case and compare the uids (and totalCount) they return:
 * the same rows from the same SQL, or the comparison would mean nothing.
 */
export async function sameAnswers(
  arborUrls: Record<string, string>,
  baselineUrl: string,
  token: string,
  log: Log,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const key = (x: any) =>
    JSON.stringify(x.groups ? [x.groups.map((g: any) => g.uid), x.totalCount] : x.uid);
  for (const [name, url] of Object.entries(arborUrls)) {
    const a = await getJson<any>(url, token);
    const b = await getJson<any>(`${baselineUrl}/case/${name}`, '');
    out[name] =
      key(a) !== key(b)
        ? 'DIFFERENT answers'
        : `same ${a.groups ? `${a.groups.length} rows, totalCount ${a.totalCount}` : 'group'}`;
    log(`  ${name}: ${out[name]}`);
  }
  return out;
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) every captured query (the viewer's SQL, then the same lists
 * as the admin token builds them, without the visibility filter) and time each of the
 * viewer's queries alone. Full plans go to `explainFile`.
 */
export async function plansAndTimes(
  c: pg.ClientBase,
  viewer: Record<string, CapturedCase>,
  admin: Record<string, CapturedCase>,
  grantSql: { sql: string; bindings: unknown[] },
  explainFile: string,
  log: Log,
) {
  const plans: PlanCheck[] = [];
  const queryTimes: Record<string, { medianMs: number; p90Ms: number }> = {};
  for (const [name, cc] of Object.entries(viewer)) {
    plans.push(await explain(c, `${name} page`, cc.page));
    queryTimes[`${name} page`] = await timeSql(c, cc.page);
    if (cc.count) {
      plans.push(await explain(c, `${name} count`, cc.count));
      queryTimes[`${name} count`] = await timeSql(c, cc.count);
    }
  }
  plans.push(await explain(c, 'grant lookup (per request)', grantSql));
  for (const [name, cc] of Object.entries(admin)) {
    if (!cc.count) continue;
    plans.push(await explain(c, `${name} page, as admin (no visibility filter)`, cc.page));
    plans.push(await explain(c, `${name} count, as admin`, cc.count));
  }
  writeFileSync(explainFile, plans.map((p) => `## ${p.query}\n${p.plan}\n`).join('\n'));
  for (const p of plans) {
    const notes = `${p.seqScan ? ', SEQ SCAN' : ''}${p.sortRows ? `, sorts ${p.sortRows} rows` : ''}`;
    log(`  plan ${p.query}: ${p.executionMs} ms${notes}`);
  }
  return { plans, queryTimes };
}
