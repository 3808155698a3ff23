/**
 * `npm run bench -- --only=tracing [--seconds=10] [--rounds=3] [--pairs=4] [--sampling=0.1]
 * [--control] [--warmup=3]`: what tracing costs. Pairs of Arbor processes on one fresh database
 * (`arbor_bench_tracing`), one with tracing off and one exporting OTLP/HTTP at `--sampling`
 * (parentbased_traceidratio) to a receiver that accepts and discards; the same Get and access
 * check loaded on each, in alternating rounds (off, on, on, off…) so that the machine's drift
 * hits both alike, and on `--pairs` fresh pairs of processes, started in alternating order,
 * because one process can be faster than its identical twin for its whole life. Prints
 * requests per second of each, the server's CPU per request (from /proc), and the ratios
 * (over all rounds, and the median of each pair's own); writes nothing. `--control` runs
 * the "on" servers without tracing: the ratio it prints is the comparison's noise floor.
 * The tracing cost bar: at 10 % sampling, ≤ 5 % off the Get's and the check's throughput.
 *
 * `--case=get` (or `check`): that case alone.
 *
 * `--toggle`: one traced process per pair instead of two, its tracing paused and resumed by
 * signal between windows (bench/tracing-toggle-preload.mjs), so that the process-to-process
 * noise drops out: what it shows is what tracing's hooks cost per request, measured within
 * one process. A process that traces keeps the optimised code its traced requests shaped in
 * its paused windows too, so this is the direct cost, not the whole: the pairs show the rest.
 *
 * `--interleave=MS` (implies `--toggle`): the process flips its own tracing every MS ms under
 * one continuous load of `--seconds` × `--rounds` × 2 per case, and reports each window
 * (wall time, CPU, responses); the ratio is taken over adjacent pairs of windows, with a
 * 95 % interval from resampling them (bench/interleaved-windows.ts). A small VM's slow
 * spells last seconds: with windows of 100 ms they fall on both sides alike.
 *
 * `--cpu-prof=DIR`: both servers run under `node --cpu-prof` (profiles kept in DIR/off and
 * DIR/on), and each case also prints the main thread's busy time per request from them,
 * with the functions that grew most from off to on: where tracing's cost goes.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { migrate } from './db.js';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { busyByFunction, compareBusy, nowUs } from './cpu-profile-summary.js';
import {
  summarizeWindows,
  type InterleavedSummary,
  type ToggleWindow,
} from './interleaved-windows.js';
import { measure, median } from './load.js';
import { startArbor, type Child } from './procs.js';
import { ADMIN_TOKEN, VIEWER_ROLE } from './scale.js';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) =>
  Number(args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const seconds = arg('seconds', 10);
const rounds = arg('rounds', 3);
const pairs = arg('pairs', 4);
const sampling = arg('sampling', 0.1);
/** Unmeasured seconds of each case on each new server first: JIT warm-up is not the cost. */
const warmup = arg('warmup', 3);
const control = args.includes('--control');
const interleave = arg('interleave', 0);
const toggle = args.includes('--toggle') || interleave > 0;
const only = args.find((a) => a.startsWith('--case='))?.slice('--case='.length);
const profileDir = args.find((a) => a.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length);
const profiled = (side: 'off' | 'on') =>
  profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, side)}`];
/** The traced servers' node flags: with `--toggle`, the preload that pauses their tracing. */
const onNodeArgs = () => [
  ...profiled('on'),
  ...(toggle ? ['--import', './bench/tracing-toggle-preload.mjs'] : []),
];
/** What the summary calls the traced side. */
const onLabel = control
  ? 'control (off again)'
  : `tracing at ${sampling * 100} %${toggle ? ' (same process)' : ''}`;
const ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NAME = 'arbor_bench_tracing';
const log = (m: string) => console.log(`[tracing ${new Date().toISOString().slice(11, 19)}] ${m}`);

/** A fresh database for this bench alone (the main bench's seeded ones stay untouched). */
async function freshDatabase(): Promise<string> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${NAME} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${NAME}`);
  } finally {
    await admin.end();
  }
  const u = new URL(ADMIN_URL);
  u.pathname = `/${NAME}`;
  return u.toString();
}

/** An OTLP/HTTP receiver that answers 200 to everything and keeps nothing. */
async function discardingReceiver(): Promise<{
  url: string;
  batches: () => number;
  close(): void;
}> {
  let batches = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      batches++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, batches: () => batches, close: () => server.close() };
}

async function api(base: string, path: string, body: unknown): Promise<{ uid: string }> {
  const r = await fetch(base + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as { uid: string };
}

/** The measured runs of one case on each side: their windows (µs, `nowUs`) and requests. */
type Measured = Record<'off' | 'on', { windows: Array<[number, number]>; n: number }>;

const HEADERS = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

/** The requests of one case: what `measure` loads. */
interface Case {
  path: string;
  method: 'GET' | 'POST';
  body?: string;
}

async function main(): Promise<void> {
  const url = await freshDatabase();
  /** Where an interleaving server writes its windows (one server at a time). */
  const reportDir = mkdtempSync(join(tmpdir(), 'arbor-tracing-bench-'));
  const reportFile = join(reportDir, 'windows.json');
  await migrate(url);
  const receiver = await discardingReceiver();
  const procs: Child[] = [];
  /** Per case, the measured windows and requests of each side (for the profiles). */
  const measured: Record<string, Measured> = {};
  const startOff = () => startArbor(url, profiled('off'));
  // `--control`: the "on" server runs without tracing too, to show how far two identical
  // processes differ on this machine (the noise floor of the comparison).
  const startOn = () =>
    startArbor(url, onNodeArgs(), 1, {
      OTEL_TRACES_EXPORTER: control ? 'none' : 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: String(sampling),
      ...(interleave > 0
        ? { BENCH_TOGGLE_EVERY_MS: String(interleave), BENCH_TOGGLE_REPORT: reportFile }
        : {}),
      // `BENCH_ON_X=v` in the bench's environment sets X=v on the "on" servers (for an
      // experiment: OTEL_BSP_MAX_QUEUE_SIZE, OTEL_EXPORTER_OTLP_COMPRESSION…).
      ...Object.fromEntries(
        Object.entries(process.env)
          .filter(([k, v]) => k.startsWith('BENCH_ON_') && v !== undefined)
          .map(([k, v]) => [k.slice('BENCH_ON_'.length), v!]),
      ),
    });
  /** `--toggle`: whether each process traces now (it starts tracing). */
  const traced = new Map<number, boolean>();
  const setTraced = async (p: Child, on: boolean) => {
    if (!toggle || (traced.get(p.pid) ?? true) === on) return;
    process.kill(p.pid, 'SIGUSR2');
    traced.set(p.pid, on);
    // The preload answers on its next turn; its line ("[toggle] …") reaches stderr.
    await new Promise((r) => setTimeout(r, 300));
  };
  /**
   * A fresh pair of servers, started in the order `pair` gives (off first on even pairs).
   * Two identical processes on this 2-core machine differ by up to 14 % in throughput for
   * their whole life (measured with `--control`: layout, JIT, core placement), so one pair
   * cannot show a 5 % effect: every figure is taken over several pairs.
   */
  const startPair = async (pair: number): Promise<{ off: Child; on: Child }> => {
    if (toggle) {
      const one = await startOn();
      procs.push(one);
      return { off: one, on: one };
    }
    const onFirst = pair % 2 === 1;
    const first = await (onFirst ? startOn() : startOff());
    procs.push(first);
    const second = await (onFirst ? startOff() : startOn());
    procs.push(second);
    return onFirst ? { off: second, on: first } : { off: first, on: second };
  };
  const stopAll = async () => {
    for (const p of procs.splice(0).reverse()) await p.stop();
  };
  try {
    let servers = await startPair(0);
    const group = await api(servers.off.url, '/iam/v2beta1/groups', { name: 'tracing-bench' });
    const identity = await api(servers.off.url, `/iam/v2beta1/identities/${group.uid}`, {
      name: 'checked',
      claimMatch: { issuer: 'https://issuer.bench.local', subject: 'checked' },
    });
    await api(servers.off.url, `/iam/v2beta1/roleBindings/${group.uid}`, {
      identityUid: identity.uid,
      roleUid: VIEWER_ROLE,
    });
    /** `--interleave`: every case's windows, over all pairs. */
    const windows: Record<string, ToggleWindow[]> = {};
    const cases: Record<string, Case> = {
      get: { path: `/iam/v2beta1/groups/${group.uid}`, method: 'GET' },
      check: {
        path: '/iam/v2beta1/access:check',
        method: 'POST',
        body: JSON.stringify({
          identityUid: identity.uid,
          capability: 'groups.list',
          groupUid: group.uid,
        }),
      },
    };
    const figures: Figures = {};
    // `--case=NAME`: that case alone.
    if (only !== undefined) for (const k of Object.keys(cases)) if (k !== only) delete cases[k];
    for (const name of Object.keys(cases)) {
      figures[name] = { rps: { off: [], on: [] }, cpu: { off: [], on: [] }, ratios: [] };
      measured[name] = { off: { windows: [], n: 0 }, on: { windows: [], n: 0 } };
    }
    for (let pair = 0; pair < pairs; pair++) {
      if (pair > 0) {
        await stopAll();
        servers = await startPair(pair);
      }
      if (interleave > 0) {
        await interleaveCases(servers.on, cases, pair, reportFile, windows, measured);
        continue;
      }
      // Each new process is warmed first: its first seconds run cold code (and the traced
      // one more of it: the SDK, the exporter), which is start-up, not what tracing costs.
      if (warmup > 0)
        for (const c of Object.values(cases))
          for (const side of ['off', 'on'] as const) {
            const p = servers[side];
            await setTraced(p, side === 'on');
            await measure({ ...c, url: p.url + c.path, headers: HEADERS }, warmup, p.pid, NAME);
          }
      for (const [name, c] of Object.entries(cases)) {
        const m = measured[name]!;
        const f = figures[name]!;
        const mine: Record<'off' | 'on', number[]> = { off: [], on: [] };
        // Each round alternates which side goes first: the side measured second was slower
        // in every pair of a --control run (the first's aftermath), an edge no ratio may keep.
        for (let r = 0; r < rounds; r++)
          for (const side of r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
            const p = servers[side];
            await setTraced(p, side === 'on');
            const t0 = nowUs();
            const run = await measure(
              { ...c, url: p.url + c.path, headers: HEADERS },
              seconds,
              p.pid,
              NAME,
            );
            m[side].windows.push([t0, nowUs()]);
            m[side].n += run.requests;
            if (run.errors > 0 || run.non2xx > 0)
              throw new Error(`${name} ${side}: ${run.errors} errors, ${run.non2xx} non-2xx`);
            mine[side].push(run.rps);
            f.rps[side].push(run.rps);
            f.cpu[side].push(run.serverCpuMs * 1000);
            log(
              `${name} pair ${pair + 1} round ${r + 1} ${side}: ${run.rps.toFixed(0)} req/s, ` +
                `server CPU ${(run.serverCpuMs * 1000).toFixed(1)} µs/req, ` +
                `others' CPU ${(run.othersCpuShare * 100).toFixed(0)} %`,
            );
          }
        f.ratios.push(median(mine.on) / median(mine.off));
      }
    }
    for (const [name, w] of Object.entries(windows))
      log(`${name}, all ${pairs} processes: ${describe(summarizeWindows(w))}`);
    reportFigures(figures);
    log(`OTLP export requests received: ${receiver.batches()}`);
  } finally {
    await stopAll();
    receiver.close();
    rmSync(reportDir, { recursive: true, force: true });
  }
  if (profileDir !== undefined) reportProfiles(profileDir, measured);
}

/** `--cpu-prof`: each case's main-thread time per request, off against on, by function. */
function reportProfiles(dir: string, measured: Record<string, Measured>): void {
  for (const [name, m] of Object.entries(measured)) {
    const off = busyByFunction(join(dir, toggle ? 'on' : 'off'), m.off.windows);
    const on = busyByFunction(join(dir, 'on'), m.on.windows);
    log(`${name}, CPU profiles (${dir}):\n${compareBusy(off, m.off.n, on, m.on.n)}`);
  }
}

/** `--interleave`: each case on process `p` (warmed, then measured), its windows kept. */
async function interleaveCases(
  p: Child,
  cases: Record<string, Case>,
  pair: number,
  reportFile: string,
  windows: Record<string, ToggleWindow[]>,
  measured: Record<string, Measured>,
): Promise<void> {
  for (const [name, c] of Object.entries(cases)) {
    if (warmup > 0) await interleaved(p, c, warmup, reportFile);
    const mine = await interleaved(p, c, seconds * rounds * 2, reportFile);
    (windows[name] ??= []).push(...mine);
    // For `--cpu-prof`: each side's windows, to split the one profile by.
    for (const w of mine) {
      const m = measured[name]![w.on ? 'on' : 'off'];
      m.windows.push([w.start, w.start + w.us]);
      m.n += w.n;
    }
    log(`${name} process ${pair + 1}: ${describe(summarizeWindows(mine))}`);
  }
}

/**
 * `--interleave`: `c` loaded for `s` seconds on `p` while it flips its own tracing, and the
 * windows it measured (its preload writes them to `reportFile` when signalled again).
 */
async function interleaved(
  p: Child,
  c: Case,
  s: number,
  reportFile: string,
): Promise<ToggleWindow[]> {
  rmSync(reportFile, { force: true });
  process.kill(p.pid, 'SIGUSR2');
  const run = await measure({ ...c, url: p.url + c.path, headers: HEADERS }, s, p.pid, NAME);
  if (run.errors > 0 || run.non2xx > 0)
    throw new Error(`${run.errors} errors, ${run.non2xx} non-2xx`);
  process.kill(p.pid, 'SIGUSR2');
  for (let i = 0; !existsSync(reportFile); i++) {
    if (i > 100) throw new Error(`no windows from the server in ${reportFile}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return JSON.parse(readFileSync(reportFile, 'utf8')) as ToggleWindow[];
}

/** An on ÷ off throughput ratio as the share of requests tracing cost (`12.3 %`). */
const fewer = (x: number) => `${((1 - x) * 100).toFixed(1)} %`;

/** Per case: every round's throughput and server CPU by side, each pair's on/off ratio. */
type Figures = Record<
  string,
  { rps: Record<'off' | 'on', number[]>; cpu: Record<'off' | 'on', number[]>; ratios: number[] }
>;

/** The rounds' figures of each case (none with `--interleave`), as one line each. */
function reportFigures(figures: Figures): void {
  for (const [name, { rps: r, cpu: k, ratios }] of Object.entries(figures)) {
    if (r.off.length === 0) continue;
    log(
      `${name}: off ${median(r.off).toFixed(0)} req/s, ` +
        `${onLabel} ` +
        `${median(r.on).toFixed(0)} req/s: ${fewer(median(r.on) / median(r.off))} fewer ` +
        `(median of ${ratios.length} pairs' own: ${fewer(median(ratios))}; pairs ` +
        `${ratios.map(fewer).join(', ')}); server CPU off ${median(k.off).toFixed(1)} µs/req, ` +
        `on ${median(k.on).toFixed(1)} µs/req: ` +
        `${((median(k.on) / median(k.off) - 1) * 100).toFixed(1)} % more`,
    );
  }
}

/** An interleaved run's figures, as one line. */
function describe(s: InterleavedSummary): string {
  return (
    `${s.pairs} pairs of ${interleave} ms windows: off ${s.off.rps.toFixed(0)} req/s ` +
    `(${s.off.cpuUsPerReq.toFixed(1)} µs CPU/req), ${onLabel} ${s.on.rps.toFixed(0)} req/s ` +
    `(${s.on.cpuUsPerReq.toFixed(1)} µs CPU/req): ${fewer(s.ratio)} fewer ` +
    `(95 % interval ${fewer(s.high)} to ${fewer(s.low)}), CPU per request ` +
    `${((s.cpuRatio - 1) * 100).toFixed(1)} % more`
  );
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
