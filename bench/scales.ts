/**
 * `npx tsx bench/scales.ts <full>.json <10m>.json [--out=FILE.md]`: two results of
 * bench/run.ts side by side in one table: every case both runs have (or either
 * has), its throughput, p50 / p99 and Arbor CPU per request at each scale and the ratios
 * (10m / full), the database's size and seeding time, and every captured plan with its
 * execution time and whether it has a sequential scan (a plan that flips to one as the data
 * grows shows here as `no → SEQ`). A `--plans-only` result (no load) contributes its plans
 * and sizes alone.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { RunResult } from './load.js';
import type { PlanCheck } from './queries.js';
import type { CaseResult, PairResult } from './report.js';

interface Result {
  meta: { started: string; uptimeBefore: string; uptimeAfter?: string; scale: { name: string } };
  database?: { name: string; sizes: Record<string, string>; bytes: number };
  seed?: { seconds: number };
  plans?: PlanCheck[];
  cases?: CaseResult[];
  grpc?: PairResult[];
}

const files = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const outFile = process.argv.find((a) => a.startsWith('--out='))?.slice('--out='.length);
if (files.length !== 2) throw new Error('usage: bench/scales.ts <small>.json <large>.json');
const [a, b] = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as Result) as [Result, Result];

const f = (x: number | undefined, d = 1) =>
  x === undefined || !Number.isFinite(x)
    ? '–'
    : x.toLocaleString('en', { maximumFractionDigits: d, minimumFractionDigits: d });
const GB = 1024 ** 3;

/** Every side of a result by a row name: REST cases (Arbor), gRPC pairs (gRPC side). */
function sides(r: Result): Map<string, RunResult> {
  const out = new Map<string, RunResult>();
  for (const c of r.cases ?? []) if (c.arbor) out.set(c.name, c.arbor.summary);
  for (const p of r.grpc ?? []) out.set(p.name, p.grpc.summary);
  return out;
}

const sa = sides(a);
const sb = sides(b);
const names = [...new Set([...sa.keys(), ...sb.keys()])];
const cell = (s: RunResult | undefined) =>
  s ? `${f(s.rps, 0)} · ${f(s.p50, 2)} / ${f(s.p99, 2)} · ${f(s.serverCpuMs, 3)}` : '–';
const A = a.meta.scale.name;
const B = b.meta.scale.name;

const lines = [
  `# Two scales side by side: ${A} and ${B}`,
  '',
  `| | ${A} | ${B} |`,
  '|---|---|---|',
  `| results | ${a.meta.started} | ${b.meta.started} |`,
  `| load before | ${a.meta.uptimeBefore} | ${b.meta.uptimeBefore} |`,
  `| database | ${a.database?.name ?? '–'}, ${f((a.database?.bytes ?? NaN) / GB, 2)} GB | ${b.database?.name ?? '–'}, ${f((b.database?.bytes ?? NaN) / GB, 2)} GB |`,
  `| seeding | ${f(a.seed?.seconds, 0)} s | ${f(b.seed?.seconds, 0)} s |`,
  '',
  `Each cell: req/s · p50 / p99 ms · Arbor CPU ms per request. Ratios are ${B} / ${A} ` +
    '(throughput: above 1 is faster; p99: below 1 is faster).',
  '',
  `| case | ${A} | ${B} | req/s ratio | p99 ratio | CPU ratio |`,
  '|---|---|---|--:|--:|--:|',
  ...names.map((n) => {
    const x = sa.get(n);
    const y = sb.get(n);
    const r = (g: (s: RunResult) => number) => (x && y ? f(g(y) / g(x), 2) : '–');
    return `| ${n} | ${cell(x)} | ${cell(y)} | ${r((s) => s.rps)} | ${r((s) => s.p99)} | ${r((s) => s.serverCpuMs)} |`;
  }),
  '',
  `| plan | ${A} ms | ${B} ms | ${A} seq scan | ${B} seq scan |`,
  '|---|--:|--:|---|---|',
];
const pa = new Map((a.plans ?? []).map((p) => [p.query, p]));
const pb = new Map((b.plans ?? []).map((p) => [p.query, p]));
for (const q of new Set([...pa.keys(), ...pb.keys()])) {
  const x = pa.get(q);
  const y = pb.get(q);
  const seq = (p?: PlanCheck) => (p === undefined ? '–' : p.seqScan ? '**SEQ**' : 'no');
  const flip = x && y && !x.seqScan && y.seqScan ? ' (flipped)' : '';
  lines.push(
    `| ${q} | ${f(x?.executionMs, 3)} | ${f(y?.executionMs, 3)} | ${seq(x)} | ${seq(y)}${flip} |`,
  );
}

/**
 * The tenfold scale's bar: at the larger scale each of these keeps its throughput and p99 within
 * the factor of the smaller scale's (throughput at least 1/factor of it, p99 at most
 * factor times it), and no captured plan flips to a sequential scan.
 */
const BOUNDS: Array<[string, number]> = [
  ['get', 1.2],
  ['access.check', 1.2],
  ['children.p1', 1.2],
  ['descendants.name', 1.2],
  ['sts', 1.2],
  ['access.whoCan', 1.5],
];
lines.push('', `## Targets: ${B} against ${A}`, '', '| target | measured | |', '|---|---|---|');
for (const [n, k] of BOUNDS) {
  const x = sa.get(n);
  const y = sb.get(n);
  if (x === undefined || y === undefined) {
    lines.push(`| ${n}: req/s and p99 within ${k}× | not measured at both scales | – |`);
    continue;
  }
  const rps = y.rps / x.rps;
  const p99 = y.p99 / x.p99;
  const met = rps >= 1 / k && p99 <= k;
  lines.push(
    `| ${n}: req/s and p99 within ${k}× | ${B} req/s ${f(rps, 2)}× and p99 ${f(p99, 2)}× ${A}'s | ${met ? 'met' : '**missed**'} |`,
  );
}
const flipped = [...pb.values()].filter((p) => p.seqScan && pa.get(p.query)?.seqScan !== true);
lines.push(
  `| no plan flips to a sequential scan | ${flipped.length === 0 ? `none of ${pb.size}` : flipped.map((p) => p.query).join('; ')} | ${flipped.length === 0 ? 'met' : '**missed**'} |`,
);
const md = `${lines.join('\n')}\n`;
if (outFile) writeFileSync(outFile, md);
console.log(md);
