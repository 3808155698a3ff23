import { PACED_RATE, type RunResult } from './load.js';
import type { PlanCheck } from './queries.js';

export interface Side {
  summary: RunResult;
  runs: RunResult[];
}

export interface CaseResult {
  name: string;
  label: string;
  arbor?: Side;
  baseline?: Side;
  /** Arbor / baseline: throughput, p50, p99. */
  ratio?: { rps: number; p50: number; p99: number };
}

/** A gRPC case and the REST case with the same request, by the same closed-loop generator. */
export interface PairResult {
  name: string;
  label: string;
  /** The REST case (bench/cases.ts) whose request this is; its autocannon figure is shown too. */
  rest: string;
  restSameGenerator: Side;
  grpc: Side;
  /** gRPC / REST (same generator): throughput, p50, p99. */
  ratio: { rps: number; p50: number; p99: number };
  /** gRPC with every connection of the load a stream of one HTTP/2 session (a gRPC channel). */
  grpcShared: Side;
  ratioShared: { rps: number; p50: number; p99: number };
  /**
   * The ceiling (bench/bare-server.ts): bare node:http2 and node:http servers answering the
   * same bytes, by the same generator; absent in results from before they were added.
   */
  bareH2?: Side;
  bareHttp1?: Side;
}

export interface Target {
  target: string;
  measured: string;
  met: boolean;
}

const f = (x: number | undefined, d = 1) =>
  x === undefined || Number.isNaN(x)
    ? '–'
    : x.toLocaleString('en', { maximumFractionDigits: d, minimumFractionDigits: d });

export function ratioOf(c: CaseResult): CaseResult['ratio'] {
  if (!c.arbor || !c.baseline) return undefined;
  const a = c.arbor.summary;
  const b = c.baseline.summary;
  return { rps: a.rps / b.rps, p50: a.p50 / b.p50, p99: a.p99 / b.p99 };
}

function listTargets(cases: CaseResult[]): Target[] {
  const out: Target[] = [];
  const lists = cases.filter((x) => x.name.startsWith('children') || x.name.startsWith('desc'));
  for (const c of lists) {
    if (!c.arbor) continue;
    const s = c.arbor.summary;
    out.push({
      target: `${c.name}: p99 <= 25 ms @16 (p50 <= 5 ms: the first run's target)`,
      measured: `p50 ${f(s.p50, 2)} ms, p99 ${f(s.p99, 2)} ms`,
      met: s.p99 <= 25,
    });
    if (c.name.startsWith('descendants'))
      out.push({
        target: `${c.name}: p99 <= 2x p50 (no count refresh stall)`,
        measured: `${f(s.p99 / s.p50, 2)}x`,
        met: s.p99 <= 2 * s.p50,
      });
  }
  return out;
}

/** Evaluate the issue's targets against the figures; every line says what was compared. */
export function targets(
  cases: CaseResult[],
  extra: {
    countMs: number;
    countCostUnderLoadMs: number;
    rssPeakMB: number;
    rssProcessPeakMB?: number;
  },
): Target[] {
  const by = (n: string) => cases.find((c) => c.name === n);
  const out: Target[] = listTargets(cases);
  const p1 = by('children.p1')?.arbor?.summary;
  const deep = by('children.deep')?.arbor?.summary;
  if (p1 && deep)
    out.push({
      target: 'deep page within 1.5x of page 1 (p50)',
      measured: `${f(deep.p50 / p1.p50, 2)}x (${f(deep.p50, 2)} vs ${f(p1.p50, 2)} ms)`,
      met: deep.p50 <= 1.5 * p1.p50,
    });
  out.push({
    target: 'totalCount on the 100,000-group subtree costs the page <= 10 ms',
    measured:
      `total's query ${f(extra.countMs, 2)} ms alone (serial median); under load, baseline ` +
      `p50 with it − without: ${f(extra.countCostUnderLoadMs, 2)} ms`,
    met: extra.countMs <= 10 && extra.countCostUnderLoadMs <= 10,
  });
  for (const c of cases) {
    if (!c.ratio) continue;
    const want = c.name === 'get' ? 0.85 : 0.8;
    out.push({
      target: `${c.name}: throughput >= ${want}x baseline (same SQL)`,
      measured: `${f(c.ratio.rps, 2)}x`,
      met: c.ratio.rps >= want,
    });
  }
  const sts = by('sts')?.arbor?.summary;
  if (sts)
    out.push({
      target: 'STS >= 2,500 exchanges/s (with workers)',
      measured: `${f(sts.rps, 0)}/s`,
      met: sts.rps >= 2500,
    });
  out.push(...registryTarget(by('registry.token')?.arbor?.summary, sts));
  out.push(...accessTargets(by));
  const get = by('get')?.arbor?.summary;
  if (get)
    out.push({
      target: 'authorized get >= 3,000 req/s',
      measured: `${f(get.rps, 0)} req/s`,
      met: get.rps >= 3000,
    });
  const perProcess = extra.rssProcessPeakMB ?? extra.rssPeakMB;
  out.push({
    target: 'RSS per server process (worker) <= 200 MB',
    measured: `peak ${f(perProcess, 0)} MB per process, ${f(extra.rssPeakMB, 0)} MB all processes`,
    met: perProcess <= 200,
  });
  return out;
}

/** The token server (crane's pull request) keeps up with the STS, with a tight tail. */
function registryTarget(reg: RunResult | undefined, sts: RunResult | undefined): Target[] {
  if (!reg || !sts) return [];
  return [
    {
      target: 'registry token (pull, crane) >= STS throughput, p99 <= 2x p50',
      measured:
        `${f(reg.rps, 0)}/s vs STS ${f(sts.rps, 0)}/s (${f(reg.rps / sts.rps, 2)}x); ` +
        `p99/p50 ${f(reg.p99 / reg.p50, 2)}`,
      met: reg.rps >= sts.rps && reg.p99 <= 2 * reg.p50,
    },
  ];
}

/** The issue's target: gRPC is not slower than REST when both are loaded the same way. */
export function grpcTargets(pairs: PairResult[]): Target[] {
  return pairs.map((p) => ({
    target: `${p.name}: gRPC req/s >= REST req/s (same generator)`,
    measured:
      `${f(p.ratio.rps, 2)}x (${f(p.grpc.summary.rps, 0)} vs ` +
      `${f(p.restSameGenerator.summary.rps, 0)} req/s); one session: ` +
      `${f(p.ratioShared.rps, 2)}x (${f(p.grpcShared.summary.rps, 0)} req/s)`,
    met: Math.max(p.ratio.rps, p.ratioShared.rps) >= 1,
  }));
}

/**
 * gRPC next to REST: the same request, both by the closed-loop generator (HTTP/1.1
 * keep-alive and HTTP/2, 16 connections, one call in flight each), and the autocannon
 * figure of the REST case when it ran too.
 */
export function grpcTable(pairs: PairResult[], cases: CaseResult[]): string {
  const head =
    '| case | REST (autocannon) req/s | REST (same generator) p50 / p99 ms | REST req/s | ' +
    'gRPC p50 / p99 ms | gRPC req/s | gRPC / REST req/s (p50) | gRPC one session req/s (/ REST) | ' +
    'Arbor CPU ms/req REST / gRPC / one session | ' +
    "generator CPU ms/req REST / gRPC / one session | bare node:http2 / node:http req/s (gRPC / bare h2) | others' CPU |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|";
  const rows = pairs.map((p) => {
    const a = p.restSameGenerator.summary;
    const b = p.grpc.summary;
    const c = p.grpcShared.summary;
    const auto = cases.find((x) => x.name === p.rest)?.arbor?.summary;
    const h2 = p.bareH2?.summary;
    const h1 = p.bareHttp1?.summary;
    const others = Math.max(a.othersCpuShare, b.othersCpuShare, c.othersCpuShare);
    return (
      `| ${p.label} | ${f(auto?.rps, 0)} | ${f(a.p50, 2)} / ${f(a.p99, 2)} | ${f(a.rps, 0)} | ` +
      `${f(b.p50, 2)} / ${f(b.p99, 2)} | ${f(b.rps, 0)} | ${f(p.ratio.rps, 2)} (${f(p.ratio.p50, 2)}) | ` +
      `${f(c.rps, 0)} (${f(p.ratioShared.rps, 2)}) | ` +
      `${f(a.serverCpuMs, 2)} / ${f(b.serverCpuMs, 2)} / ${f(c.serverCpuMs, 2)} | ` +
      `${f(a.loadgenCpuMs, 2)} / ${f(b.loadgenCpuMs, 2)} / ${f(c.loadgenCpuMs, 2)} | ` +
      `${f(h2?.rps, 0)} / ${f(h1?.rps, 0)} (${f(h2 ? b.rps / h2.rps : undefined, 2)}) | ` +
      `${f(others * 100, 0)} % |`
    );
  });
  return [head, ...rows].join('\n');
}

export function resultTable(cases: CaseResult[]): string {
  const head =
    '| case | Arbor p50 ms | Arbor p99 ms | Arbor req/s | baseline p50 ms | baseline p99 ms | ' +
    'baseline req/s | ratio req/s (p50) | Arbor RSS peak MB | CPU ms/req: Arbor + PG | ' +
    "baseline + PG | others' CPU |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|";
  const cpu = (r: RunResult | undefined) =>
    r ? `${f(r.serverCpuMs, 2)} + ${f(r.pgCpuMs, 2)}` : '–';
  const rows = cases.map((c) => {
    const a = c.arbor?.summary;
    const b = c.baseline?.summary;
    const others = Math.max(a?.othersCpuShare ?? 0, b?.othersCpuShare ?? 0);
    return (
      `| ${c.label} | ${f(a?.p50, 2)} | ${f(a?.p99, 2)} | ${f(a?.rps, 0)} | ${f(b?.p50, 2)} | ` +
      `${f(b?.p99, 2)} | ${f(b?.rps, 0)} | ` +
      `${c.ratio ? `${f(c.ratio.rps, 2)} (${f(c.ratio.p50, 2)})` : '–'} | ${f(a?.rssPeakMB, 0)} | ` +
      `${cpu(a)} | ${cpu(b)} | ${f(others * 100, 0)} % |`
    );
  });
  return [head, ...rows].join('\n');
}

export function planTable(plans: PlanCheck[]): string {
  const rows = plans.map(
    (p) =>
      `| ${p.query} | ${f(p.executionMs, 3)} | ${p.seqScan ? '**yes**' : 'no'} | ${p.sortRows || '–'} |`,
  );
  return ['| query | execution ms | Seq Scan | Sort rows |', '|---|--:|---|--:|', ...rows].join(
    '\n',
  );
}

export function targetTable(ts: Target[]): string {
  const rows = ts.map((t) => `| ${t.target} | ${t.measured} | ${t.met ? 'met' : '**missed**'} |`);
  return ['| target | measured | |', '|---|---|---|', ...rows].join('\n');
}

/** The per-run report: what ran, where, and every figure with its limits. */
export function renderMarkdown(r: {
  meta: Record<string, unknown>;
  database: { name: string; sizes: Record<string, string>; dropped: boolean };
  seed: { seconds: number; reused: boolean };
  walk: { rows: number; requests: number; ms: number };
  sanity: Record<string, string>;
  sqlObservedInPgStatActivity: Record<string, boolean>;
  plans: PlanCheck[];
  queryTimes: Record<string, { medianMs: number; p90Ms: number }>;
  rssIdleMB: number;
  issuerFetchesDuringLoad: number;
  cases: CaseResult[];
  grpc?: PairResult[];
  grpcSanity?: Record<string, string>;
  targets: Target[];
  medianOthersCpuShare: number;
}): string {
  const m = r.meta;
  const times = Object.entries(r.queryTimes).map(
    ([q, t]) => `| ${q} | ${f(t.medianMs, 3)} | ${f(t.p90Ms, 3)} |`,
  );
  const grpc = r.grpc?.length
    ? `
## gRPC next to REST

Same request, same Arbor process and port, same viewer token. REST and gRPC both loaded by
the closed-loop generator in \`bench/closed-loop.ts\` (Node's HTTP/1.1 and HTTP/2 clients,
16 connections, one request in flight each, answers read whole and not decoded), runs
alternating; the autocannon column is the REST case's own figure.

${grpcTable(r.grpc, r.cases)}

${Object.entries(r.grpcSanity ?? {})
  .map(([k, v]) => `- ${k}: ${v}`)
  .join('\n')}
`
    : '';
  return `# Arbor bench: ${(m.scale as { name: string }).name} scale, ${String(m.started)}

- Arbor: \`serve\` with ${Number(m.workers ?? 1)} worker process(es) (ARBOR_WORKERS); the baseline is one process
- machine: ${String(m.cpu)}, ${String(m.memoryGB)} GB; ${String(m.node)}; ${String(m.postgres)}
- load before: \`${String(m.uptimeBefore)}\`; after: \`${String(m.uptimeAfter)}\`
- other processes used a median ${f(r.medianOthersCpuShare * 100, 0)} % of the machine's CPU during the runs
- code: ${String(m.git)}
- database ${r.database.name}: ${Object.entries(r.database.sizes)
    .map(([k, v]) => `${k} ${v}`)
    .join(
      ', ',
    )}; seeded in ${f(r.seed.seconds, 1)} s${r.seed.reused ? ' (earlier run, reused)' : ''}
- deep cursor: walked ${r.walk.rows.toLocaleString('en')} rows in ${r.walk.requests} requests (${f(r.walk.ms / 1000, 1)} s)
- Arbor RSS idle before load: ${f(r.rssIdleMB, 0)} MB; issuer fetches during load: ${r.issuerFetchesDuringLoad}
- 16 connections, no pipelining; medians over runs of each run's p50 / p99 / req/s (latency per response, sub-ms)

## Figures

${resultTable(r.cases)}

${grpc}
## Targets

${targetTable(r.targets)}

## Same answers, same SQL

${Object.entries(r.sanity)
  .map(
    ([k, v]) =>
      `- ${k}: Arbor and baseline returned ${v}; Arbor's SQL seen in pg_stat_activity: ${r.sqlObservedInPgStatActivity[k] ?? '–'}`,
  )
  .join('\n')}

## Plans (EXPLAIN ANALYZE, BUFFERS; full text in the -explain.txt file)

${planTable(r.plans)}

## Each query alone (serial, one connection, client round trip)

| query | median ms | p90 ms |
|---|--:|--:|
${times.join('\n')}
`;
}

/**
 * A check keeps up with an authorized get, with a tight tail; who-can's first
 * page at a group with 10,000 bindings above it stays fast under the same 16 connections.
 * The paced rows (a fixed request rate, below saturation) say how much of a tail is the
 * saturated closed loop's own: get and check side by side.
 */
function accessTargets(by: (n: string) => CaseResult | undefined): Target[] {
  const out: Target[] = [];
  const get = by('get')?.arbor?.summary;
  const check = by('access.check')?.arbor?.summary;
  if (get && check)
    out.push({
      target: 'access check >= 0.8x authorized get throughput, p99 <= 2x p50',
      measured:
        `${f(check.rps, 0)}/s vs get ${f(get.rps, 0)}/s (${f(check.rps / get.rps, 2)}x); ` +
        `p99/p50 ${f(check.p99 / check.p50, 2)} (get's ${f(get.p99 / get.p50, 2)})`,
      met: check.rps >= 0.8 * get.rps && check.p99 <= 2 * check.p50,
    });
  const paced = by('access.check.paced')?.arbor?.summary;
  const pacedGet = by('get.paced')?.arbor?.summary;
  if (paced)
    out.push({
      target: `access check p99 <= 2x p50, paced at ${PACED_RATE.toLocaleString('en')}/s`,
      measured:
        `p50 ${f(paced.p50, 2)} / p99 ${f(paced.p99, 2)} ms: ${f(paced.p99 / paced.p50, 2)}x` +
        (pacedGet ? ` (get's ${f(pacedGet.p99 / pacedGet.p50, 2)}x)` : ''),
      met: paced.p99 <= 2 * paced.p50,
    });
  const whoCan = by('access.whoCan')?.arbor?.summary;
  if (whoCan)
    out.push({
      target: 'who-can first page, 10,000 bindings above, p99 <= 50 ms',
      measured: `p99 ${f(whoCan.p99, 2)} ms at ${f(whoCan.rps, 0)} pages/s`,
      met: whoCan.p99 <= 50,
    });
  // The simulate target is p95 <= 2 s; p99 is shown beside it (results from before p95 have none).
  const sim = by('access.simulate')?.arbor?.summary;
  if (sim)
    out.push({
      target: 'access:simulate, a binding at an org root, p95 <= 2 s',
      measured: `p50 ${f(sim.p50, 1)} / p95 ${f(sim.p95, 1)} / p99 ${f(sim.p99, 1)} ms at ${f(sim.rps, 0)}/s`,
      met: (sim.p95 ?? sim.p99) <= 2_000,
    });
  return out;
}
