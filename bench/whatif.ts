/**
 * `npx tsx bench/whatif.ts [--quick] [sql.json]`: the count queries bench/run.ts found
 * to bound the list cases, next to the rewrites BENCHMARKS.md proposes: plans, serial
 * timings, and the baseline server under the same load with the rewritten count (so the
 * gain is measured, not guessed). Reads the SQL a run captured; changes nothing in src/.
 */
import { execSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import pg from 'pg';
import type { CapturedCase, Sql } from './baseline-server.js';
import { ensureDatabase } from './db.js';
import { measure, summarise } from './load.js';
import { ROOT, startBaseline } from './procs.js';
import { explain, timeSql } from './queries.js';
import { scaleOf } from './scale.js';

const scale = scaleOf(process.argv.slice(2));
const RESULTS = join(ROOT, 'bench', 'results');
const given = process.argv.slice(2).find((a) => a.endsWith('.json'));
const latest = readdirSync(RESULTS)
  .filter((f) => f.endsWith(`-${scale.name}-sql.json`))
  .sort()
  .pop();
const sqlFile = given ?? join(RESULTS, latest ?? 'missing');
const cases = JSON.parse(readFileSync(sqlFile, 'utf8')) as Record<string, CapturedCase>;

/**
 * Proposed: count descendants from the closure alone. `c.uid = g.uid` and the foreign key
 * make the join to groups a no-op for counting; the visibility filter moves to `c.uid`
 * (or is dropped when the anchor already lies inside a visible scope, as here).
 */
function closureCount(count: Sql, keepVisibility: boolean): Sql {
  const [anchor, ...vis] = count.bindings;
  if (!keepVisibility)
    return {
      sql: 'select count(*) as "n" from "group_closure" as "c" where "c"."ancestor_uid" = $1',
      bindings: [anchor],
    };
  return {
    sql:
      'select count(*) as "n" from "group_closure" as "c" where "c"."ancestor_uid" = $1 ' +
      'and ("c"."uid" in ($2) or ("c"."uid" >= $3 and "c"."uid" < $4))',
    bindings: [anchor, ...vis],
  };
}

async function main(): Promise<void> {
  const db = await ensureDatabase(scale);
  const c = new pg.Client({ connectionString: db.url, application_name: 'arbor-bench' });
  await c.connect();
  const desc = cases['descendants.name']!;
  const children = cases['children.p1']!;
  const variants: Record<string, Sql> = {
    'descendants count, as Arbor builds it (viewer)': desc.count!,
    'descendants count from the closure, visibility on c.uid': closureCount(desc.count!, true),
    'descendants count from the closure, visibility implied': closureCount(desc.count!, false),
    'descendants count capped at 10,001 (closure)': {
      sql: 'select count(*) as "n" from (select 1 from "group_closure" where "ancestor_uid" = $1 limit 10001) s',
      bindings: [desc.count!.bindings[0]],
    },
    'children count, as Arbor builds it (viewer)': children.count!,
    'children count, visibility implied': {
      sql: 'select count(*) as "n" from "groups" where "parent_uid" = $1',
      bindings: [children.count!.bindings[0]],
    },
  };
  const lines: string[] = [
    `# what-if: count queries (${scale.name}, ${new Date().toISOString()})`,
    `\`${execSync('uptime', { encoding: 'utf8' }).trim()}\`; counts of org 0 from ${relative(ROOT, sqlFile)}`,
    '',
  ];
  const plans: string[] = [];
  for (const [name, q] of Object.entries(variants)) {
    const p = await explain(c, name, q);
    const t = await timeSql(c, q);
    lines.push(
      `- ${name}: median ${t.medianMs.toFixed(2)} ms, p90 ${t.p90Ms.toFixed(2)} ms; ` +
        `EXPLAIN ${p.executionMs} ms${p.seqScan ? ', Seq Scan' : ''}`,
    );
    plans.push(`## ${name}\n${q.sql}\n${p.plan}\n`);
    console.log(lines[lines.length - 1]);
  }
  await c.end();

  // The baseline under the bench's load, once with the proposed count and once with none.
  const file = join(
    RESULTS,
    `${new Date().toISOString().slice(0, 10)}-${scale.name}-whatif-sql.json`,
  );
  const rewritten: Record<string, CapturedCase> = {};
  for (const name of ['descendants.name', 'descendants.created']) {
    const cc = cases[name]!;
    rewritten[name] = { ...cc, count: closureCount(cc.count!, false) };
  }
  rewritten['children.deep'] = cases['children.deep']!;
  writeFileSync(file, JSON.stringify(rewritten, null, 2));
  const base = await startBaseline(db.url, file);
  try {
    for (const path of [
      'descendants.name',
      'descendants.created',
      'descendants.name?count=0',
      'children.deep?count=0',
    ]) {
      const t = { url: `${base.url}/case/${path}` };
      await measure(t, scale.warmupSeconds, base.pid, db.name);
      const runs = [];
      for (let r = 0; r < scale.runs; r++)
        runs.push(await measure(t, scale.runSeconds, base.pid, db.name));
      const s = summarise(runs);
      const line =
        `- baseline ${path} (closure-only count where counted): p50 ${s.p50.toFixed(2)} ms, ` +
        `p99 ${s.p99.toFixed(2)} ms, ${s.rps.toFixed(0)} req/s, others' CPU ${(s.othersCpuShare * 100).toFixed(0)} %`;
      lines.push(line);
      console.log(line);
    }
  } finally {
    await base.stop();
  }
  const out = join(RESULTS, `${new Date().toISOString().slice(0, 10)}-${scale.name}-whatif.md`);
  writeFileSync(out, `${lines.join('\n')}\n\n${plans.join('\n')}`);
  console.log(`wrote ${out}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
