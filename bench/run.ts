/**
 * `npm run bench [-- --quick] [-- --only=children.p1,get,grpc.get]`: seed (once per scale),
 * start Arbor and the baseline as child processes, load both with autocannon from this
 * process, load the gRPC cases and their REST twins with the closed-loop generator, and
 * write bench/results/<date>-<scale>.{json,md} plus the captured SQL and the plans.
 * `--only=cli-startup` alone times `arbor --help` and `--version` against `node -e 0` instead
 * (bench/cli-startup.ts): no database, no load. `--only=last-used` alone compares the access
 * check with last-used recording on and off (bench/last-used-bench.ts). `--only=budgets` alone
 * compares the cost budgets on and off (bench/budgets-bench.ts). `--only=tracing` alone
 * compares tracing off and on at 10 % sampling (bench/tracing-bench.ts). `--only=oauth` alone
 * compares the token endpoint's exchange with the STS's, and a Get with and without the
 * revocation check (bench/oauth-bench.ts). `--only=conditions` alone compares a check and a
 * Get decided by a conditional binding with the same decided by a plain one
 * (bench/conditions-bench.ts).
 *
 * Scales (bench/scale.ts): `--quick`, full (default), `--scale=10m` (the tenfold scale: 10,000,100
 * groups, 1,000,000 identities, 1,010,000 bindings in `arbor_bench_10m`, kept whatever its
 * size). `--seed-only` seeds the scale's database and records its seeding time and size
 * (bench/results/<date>-<scale>-seed.json); `nice -n 10 npm run bench -- --scale=10m
 * --seed-only` is the one command for the 10m seed (the seeding backend takes the niceness).
 * `--reseed` drops a half-seeded database first. `--plans-only` captures and EXPLAINs every
 * list case's SQL without load; `npx tsx bench/scales.ts A.json B.json` puts two results in
 * one table with their plans (a flip to a sequential scan is marked). `--tag=NAME` names the
 * results of a partial run. `--profile=open-loop` is the TLS, new-connection, fixed-arrival
 * profile (bench/open-loop.ts; `--long` for 5-minute runs).
 */
import { execSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadCases, runCase } from './cases.js';
import { plansAndTimes, sameAnswers } from './checks.js';
import * as bdb from './db.js';
import { ensureRepo, exchange, exchangeBody, prepareSts, walk, type Sts } from './fixtures.js';
import { sameGrpcAnswers } from './grpc-checks.js';
import { grpcPairs, runPair } from './grpc-cases.js';
import { median, processTree } from './load.js';
import { ROOT, startArbor, startBaseline, type Child } from './procs.js';
import { captureSql } from './queries.js';
import {
  grpcTargets,
  renderMarkdown,
  targets,
  type CaseResult,
  type PairResult,
} from './report.js';
import {
  PAGE_SIZE,
  REGISTRY_REPO,
  REGISTRY_SERVICE,
  databaseNameOf,
  orgUid,
  scaleOf,
  teamUid,
  type Scale,
} from './scale.js';
import { seed } from './seed.js';

const args = process.argv.slice(2);
const scale: Scale = scaleOf(args);
/** `--seed-only`: create, migrate and seed the scale's database, print its size, and stop. */
const seedOnly = args.includes('--seed-only');
/** `--plans-only`: no load: capture the SQL of every list case and EXPLAIN it (plan flips). */
const plansOnly = args.includes('--plans-only');
/** `--profile=open-loop`: TLS, new connections, a fixed arrival rate (bench/open-loop.ts). */
const profile = args.find((a) => a.startsWith('--profile='))?.slice('--profile='.length);
if (profile !== undefined && profile !== 'open-loop')
  throw new Error(`--profile=${profile}: the one profile is open-loop`);
/** `--reseed`: drop the bench's own database of this scale first (a seed stopped half-way). */
const reseed = args.includes('--reseed');
const only = args
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');
/** `--workers=N`: Arbor as `serve --workers N` (default 1, the one process the baseline matches). */
const workers = Number(args.find((a) => a.startsWith('--workers='))?.slice(10) ?? '1');
if (!Number.isInteger(workers) || workers < 1) throw new Error('--workers=N needs N >= 1');
const log = (m: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}`);
const sh = (cmd: string) => execSync(cmd, { cwd: ROOT, encoding: 'utf8' }).trim();
const RESULTS = join(ROOT, 'bench', 'results');
// A partial run (--only) never overwrites the report of a complete one.
/** `--tag=NAME`: in the results' file names, so that partial runs do not overwrite each other. */
const tag = args.find((a) => a.startsWith('--tag='))?.slice('--tag='.length);
if (tag !== undefined && !/^[a-z0-9-]+$/.test(tag)) throw new Error('--tag=NAME: a-z, 0-9 and -');
const stamp = `${new Date().toISOString().slice(0, 10)}-${scale.name}${tag ? `-${tag}` : ''}${workers > 1 ? `-w${workers}` : ''}${only ? '-partial' : ''}${plansOnly ? '-plans' : ''}`;
const GB = 1024 ** 3;
const rssMB = (pid: number) =>
  processTree(pid).reduce(
    (a, p) =>
      a + Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1]) / 1024,
    0,
  );

/** Create/migrate the database and seed it unless this scale is already there. */
async function prepareDatabase() {
  if (reseed && !process.env.DATABASE_URL) {
    log(`--reseed: dropping ${databaseNameOf(scale)}`);
    await bdb.dropDatabase(databaseNameOf(scale));
  }
  const db = await bdb.ensureDatabase(scale);
  const applied = await bdb.migrate(db.url);
  log(
    `database ${db.name}${db.created ? ' (created)' : ''}; migrations applied: ${applied.length}`,
  );
  const c = new pg.Client({ connectionString: db.url, application_name: 'arbor-bench' });
  await c.connect();
  const state = await bdb.seedState(c, scale);
  if (state.foreign)
    throw new Error(
      `${db.name} holds data the bench did not seed (a seed stopped half-way?): --reseed drops it`,
    );
  if (state.otherScale) throw new Error(`${db.name} holds the ${state.otherScale} seed`);
  if (state.stale) {
    log(`${db.name} holds an older shape of the ${scale.name} seed: clearing it to reseed`);
    await bdb.clearSeed(c);
  }
  if (!state.seeded) await bdb.recordSeed(c, scale, await seed(c, scale, log));
  const { rows } = await c.query<{ seconds: string; seeded_at: Date }>(
    'SELECT seconds, seeded_at FROM bench_seed',
  );
  const seeded = {
    seconds: Number(rows[0]!.seconds),
    at: rows[0]!.seeded_at,
    reused: state.seeded,
  };
  log(
    `seeded ${seeded.at.toISOString()} in ${seeded.seconds} s${seeded.reused ? ' (reused)' : ''}`,
  );
  return { db, c, seeded, sizes: await bdb.sizes(c) };
}

/** The viewer's token, the deep cursor (walked), the case definitions and Arbor's URLs. */
async function fixtures(c: pg.ClientBase, arbor: Child, sts: Sts) {
  const viewer = sts.identities[0]!;
  const token = await exchange(arbor.url, sts, viewer);
  const org = orgUid(0);
  const { rows } = await c.query<{ uid: string }>(
    'SELECT uid FROM groups WHERE parent_uid = $1 ORDER BY uid LIMIT 1',
    [teamUid(0, 0)],
  );
  const getUid = rows[0]!.uid;
  const list = `${arbor.url}/iam/v2beta1/groups?`;
  const children = `${list}uidp.children_of=${org}&order_by=name`;
  const deepRows = (scale.deepPage - 1) * PAGE_SIZE;
  log(`walking ${deepRows.toLocaleString('en')} rows by page token for page ${scale.deepPage}`);
  const deep = await walk(
    arbor.url,
    token,
    { 'uidp.children_of': org, order_by: 'name' },
    deepRows,
  );
  log(`  ${deep.requests} requests in ${(deep.ms / 1000).toFixed(1)} s`);
  const urls: Record<string, string> = {
    'children.p1': `${children}&page_size=${PAGE_SIZE}`,
    'children.deep': `${children}&page_size=${PAGE_SIZE}&page_token=${deep.pageToken}`,
    'descendants.name': `${list}uidp.descendants_of=${org}&order_by=name&page_size=${PAGE_SIZE}`,
    'descendants.created': `${list}uidp.descendants_of=${org}&order_by=created_at&page_size=${PAGE_SIZE}`,
    get: `${arbor.url}/iam/v2beta1/groups/${getUid}`,
  };
  const registryRepo = await ensureRepo(arbor.url, org, REGISTRY_REPO);
  return {
    viewer,
    token,
    urls,
    getUid,
    org,
    registryRepo,
    walk: { rows: deepRows, requests: deep.requests, ms: deep.ms },
  };
}

async function main(): Promise<void> {
  const meta = {
    started: new Date().toISOString(),
    scale,
    workers,
    cpu: `${os.cpus().length} x ${os.cpus()[0]?.model ?? '?'}`,
    memoryGB: Math.round(os.totalmem() / GB),
    node: process.version,
    uptimeBefore: sh('uptime'),
    uptimeAfter: '',
    git: `${sh('git rev-parse --short HEAD')} + ${sh('git status --porcelain -- src | wc -l')} changed files under src/`,
    postgres: '',
  };
  log(`scale ${scale.name}; ${meta.cpu}; ${meta.uptimeBefore}`);
  const { db, c, seeded, sizes } = await prepareDatabase();
  meta.postgres = (await c.query<{ v: string }>('SELECT version() AS v')).rows[0]!.v;
  mkdirSync(RESULTS, { recursive: true });
  if (profile === 'open-loop') {
    try {
      await (
        await import('./open-loop.js')
      ).openLoopProfile({ scale, db, c, args, log, meta, results: RESULTS, stamp });
    } finally {
      await c.end();
    }
    return;
  }
  if (seedOnly) {
    const bytes = await bdb.databaseBytes(c);
    const seed = { seconds: seeded.seconds, seededAt: seeded.at, reused: seeded.reused };
    writeFileSync(
      join(RESULTS, `${stamp}-seed.json`),
      JSON.stringify({ meta, database: { name: db.name, sizes, bytes }, seed }, null, 2),
    );
    log(`${db.name}: ${(bytes / GB).toFixed(2)} GB; ${JSON.stringify(sizes)}`);
    await c.end();
    return;
  }
  const procs: Child[] = [];
  let sts: Sts | undefined;
  let bytes = 0;
  try {
    const arbor = await startArbor(db.url, [], workers);
    procs.push(arbor);
    const rssIdleMB = rssMB(arbor.pid);
    sts = await prepareSts(c, arbor.url, scale);
    const fx = await fixtures(c, arbor, sts);
    const captured = await captureSql(db.url, fx.viewer, fx.urls);
    const sqlFile = join(RESULTS, `${stamp}-sql.json`);
    writeFileSync(sqlFile, JSON.stringify(captured.cases, null, 2));
    const baseline = await startBaseline(db.url, sqlFile);
    procs.push(baseline);
    const sanity = await sameAnswers(fx.urls, baseline.url, fx.token, log);
    const admin = await captureSql(db.url, fx.viewer, fx.urls, true);
    const explainFile = join(RESULTS, `${stamp}-explain.txt`);
    const { plans, queryTimes } = await plansAndTimes(
      c,
      captured.cases,
      admin.cases,
      captured.grantSql,
      explainFile,
      log,
    );
    if (plansOnly) {
      meta.uptimeAfter = sh('uptime');
      const bytes = await bdb.databaseBytes(c);
      const seed = { seconds: seeded.seconds, seededAt: seeded.at, reused: seeded.reused };
      const database = { name: db.name, sizes, bytes };
      const out = { meta, database, seed, sanity, plans, queryTimes, cases: [], grpc: [] };
      writeFileSync(join(RESULTS, `${stamp}.json`), JSON.stringify(out, null, 2));
      log(`wrote bench/results/${stamp}.json and ${stamp}-explain.txt (no load: --plans-only)`);
      return;
    }

    const load = loadCases({
      scale,
      arborUrls: fx.urls,
      baselineUrl: baseline.url,
      token: fx.token,
      arborUrl: arbor.url,
      upstream: sts.upstream,
      identities: sts.identities,
      exchangeBody: (id) => exchangeBody(arbor.url, id),
      getUid: fx.getUid,
      registryRepo: fx.registryRepo,
      registryService: REGISTRY_SERVICE,
    });
    const pairs = grpcPairs({ restUrls: fx.urls, getUid: fx.getUid, org: fx.org }).filter(
      (p) => !only || only.includes(p.name),
    );
    const grpcSanity = pairs.length
      ? await sameGrpcAnswers(pairs, arbor.url, fx.token, log)
      : undefined;
    const fetchesBefore = sts.issuer.requests;
    const observed: Record<string, boolean> = {};
    const cases: CaseResult[] = [];
    const env = { scale, db, arbor, baseline, captured: captured.cases, log };
    for (const lc of load.filter((x) => !only || only.includes(x.name))) {
      const r = await runCase(env, lc);
      cases.push(r.result);
      if (r.observed !== undefined) observed[lc.name] = r.observed;
    }
    const grpc: PairResult[] = [];
    for (const p of pairs) grpc.push(await runPair({ scale, db, arbor, token: fx.token, log }, p));
    meta.uptimeAfter = sh('uptime');

    const p50 = (n: string, side: 'arbor' | 'baseline') =>
      cases.find((x) => x.name === n)?.[side]?.summary.p50 ?? NaN;
    const extra = {
      countMs: queryTimes['descendants.name count']?.medianMs ?? NaN,
      countCostUnderLoadMs:
        p50('descendants.name', 'baseline') - p50('descendants.name.nocount', 'baseline'),
      rssPeakMB: Math.max(...cases.map((x) => x.arbor?.summary.rssPeakMB ?? 0)),
      rssProcessPeakMB: Math.max(...cases.map((x) => x.arbor?.summary.rssProcessPeakMB ?? 0)),
    };
    bytes = await bdb.databaseBytes(c);
    const sides = [
      ...cases.flatMap((x) => [x.arbor, x.baseline]),
      ...grpc.flatMap((p) => [p.restSameGenerator, p.grpc]),
    ].filter((s) => s !== undefined);
    const result = {
      meta,
      database: {
        name: db.name,
        sizes,
        bytes,
        dropped: bytes > 5 * GB && !db.external && scale.name !== '10m',
      },
      seed: { seconds: seeded.seconds, seededAt: seeded.at, reused: seeded.reused },
      walk: fx.walk,
      visibility: captured.visibility,
      grantSql: captured.grantSql,
      sql: captured.cases,
      adminSql: admin.cases,
      sqlObservedInPgStatActivity: observed,
      sanity,
      plans,
      queryTimes,
      rssIdleMB,
      issuerFetchesDuringLoad: sts.issuer.requests - fetchesBefore,
      cases,
      grpc,
      grpcSanity,
      extra,
      targets: [...targets(cases, extra), ...grpcTargets(grpc)],
      medianOthersCpuShare: median(sides.map((s) => s.summary.othersCpuShare)),
    };
    writeFileSync(join(RESULTS, `${stamp}.json`), JSON.stringify(result, null, 2));
    const md = renderMarkdown(result);
    writeFileSync(join(RESULTS, `${stamp}.md`), md);
    console.log(`\n${md}`);
    log(`wrote bench/results/${stamp}.{json,md}, ${stamp}-sql.json, ${stamp}-explain.txt`);
  } finally {
    for (const p of procs.reverse()) await p.stop();
    await sts?.issuer.stop();
    await c.end();
  }
  // The 10m scale is kept whatever its size: seeding it is the expensive part.
  if (bytes > 5 * GB && !db.external && scale.name !== '10m') {
    log(`database is ${(bytes / GB).toFixed(1)} GB > 5 GB: dropping ${db.name}`);
    await bdb.dropDatabase(db.name);
  } else log(`keeping ${db.name} (${(bytes / GB).toFixed(2)} GB) so a re-run skips seeding`);
}

// `--only=cli-startup` is the CLI's start-up alone (bench/cli-startup.ts): no database, no load.
if (only?.length === 1 && only[0] === 'cli-startup') {
  const runs = Number(args.find((a) => a.startsWith('--runs='))?.slice(7) ?? '20');
  (await import('./cli-startup.js')).benchCliStartup(runs);
  process.exit(0);
}

// `--only=last-used`: the check with last-used recording on and off (bench/last-used-bench.ts).
if (only?.length === 1 && only[0] === 'last-used') {
  const num = (name: string, d: number) =>
    Number(args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? d);
  await (
    await import('./last-used-bench.js')
  ).benchLastUsed({
    seconds: num('seconds', 5),
    rounds: num('rounds', 6),
    concurrency: num('concurrency', 32),
    log,
  });
  process.exit(0);
}

// `--only=conditions`: a check and a Get decided by a conditional binding against a plain one (bench/conditions-bench.ts).
if (only?.length === 1 && only[0] === 'conditions') {
  const num = (name: string, d: number) =>
    Number(args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? d);
  await (
    await import('./conditions-bench.js')
  ).benchConditions({
    seconds: num('seconds', 3),
    rounds: num('rounds', 4),
    concurrency: num('concurrency', 16),
    log,
  });
  process.exit(0);
}

// `--only=budgets`: the Get, the check and who-can with the cost budgets on and off (bench/budgets-bench.ts).
if (only?.length === 1 && only[0] === 'budgets') {
  const num = (name: string, d: number) =>
    Number(args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? d);
  await (
    await import('./budgets-bench.js')
  ).benchBudgets({
    seconds: num('seconds', 3),
    rounds: num('rounds', 4),
    concurrency: num('concurrency', 16),
    log,
  });
  process.exit(0);
}

// `--only=oauth`: the token endpoint against the STS, and a Get with and without the revocation check (bench/oauth-bench.ts).
if (only?.length === 1 && only[0] === 'oauth') {
  const num = (name: string, d: number) =>
    Number(args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? d);
  await (
    await import('./oauth-bench.js')
  ).benchOAuth({
    seconds: num('seconds', 3),
    rounds: num('rounds', 6),
    concurrency: num('concurrency', 16),
    log,
  });
  process.exit(0);
}

// `--only=tracing` is tracing's cost, off against on (bench/tracing-bench.ts): a database of its own.
if (only?.length === 1 && only[0] === 'tracing') {
  await import('./tracing-bench.js');
} else
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
