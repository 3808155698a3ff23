import { readFileSync, readdirSync } from 'node:fs';
import autocannon from 'autocannon';
import { CONNECTIONS } from './scale.js';

/** One HTTP request shape; `perClient` gives each connection its own (STS identities). */
export interface Target {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  perClient?: Array<{ path: string; body?: string }>;
  /** Requests per second over all connections (autocannon's `overallRate`); absent: as fast as answered. */
  rate?: number;
}

/**
 * The paced cases' fixed rate: below what either server answers at saturation on the
 * 2-core bench machine, so that their latencies are the server's, not a queue's.
 */
export const PACED_RATE = 5_000;

export interface RunResult {
  seconds: number;
  requests: number;
  rps: number;
  p50: number;
  /** The simulate case's target is at p95; the other cases' targets are at p50 and p99. */
  p95: number;
  p99: number;
  mean: number;
  errors: number;
  non2xx: number;
  /** Server RSS (all its processes), MB: peak and median of samples every 200 ms. */
  rssPeakMB: number;
  rssMedianMB: number;
  /** The largest single server process (a worker, with --workers), MB, peak. */
  rssProcessPeakMB: number;
  /** Server processes measured (1, or the primary and its workers). */
  processes: number;
  /** CPU milliseconds per request: the server process, the database backends, the load generator. */
  serverCpuMs: number;
  pgCpuMs: number;
  loadgenCpuMs: number;
  /** Share of the machine's CPU time used by everything else during the run (other users). */
  othersCpuShare: number;
}

const TICK_MS = 10; // USER_HZ = 100 on Linux

/** utime + stime of `pid` in milliseconds (0 once it is gone). */
export function procCpuMs(pid: number): number {
  return procTicks(pid) * TICK_MS;
}

function procTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime + stime
  } catch {
    return 0;
  }
}

/**
 * The server and its children: with `arbor serve --workers N` the requests are served by
 * the cluster's workers, so CPU and memory are taken over the whole process tree.
 */
export function processTree(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++)
    for (const [p, pp] of parent) if (pp === out[i] && !out.includes(p)) out.push(p);
  return out;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function rssMB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Backends of one database: their title is `postgres: [<cluster>: ]<user> <db> <client> …`. */
function pgBackends(db: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.startsWith('postgres: ') && cmd.split(' ').includes(db))
        out.set(Number(d), procTicks(Number(d)));
    } catch {
      /* gone */
    }
  }
  return out;
}

function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  return { busy: total - idle, total };
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * Sample the server `pid` (its whole process tree), the database's backends and the
 * machine from now until `finish`, which turns what the load generator saw into a
 * RunResult. The load generator is this process: its CPU is `process.cpuUsage()`.
 */
export function startSampling(pid: number, db: string) {
  const rss: number[] = [];
  const tree = processTree(pid);
  let processPeak = 0;
  const sampler = setInterval(() => {
    const each = tree.map(rssMB);
    processPeak = Math.max(processPeak, ...each);
    rss.push(sum(each));
  }, 200);
  const pg0 = pgBackends(db);
  const srv0 = sum(tree.map(procTicks));
  const cpu0 = process.cpuUsage();
  const m0 = machineTicks();
  const t0 = performance.now();
  return {
    /** `lat`: milliseconds of each successful request; `non2xx` refused; `errors` failed. */
    finish(lat: number[], non2xx: number, errors: number): RunResult {
      const elapsed = (performance.now() - t0) / 1000;
      clearInterval(sampler);
      const cpu = process.cpuUsage(cpu0);
      const m1 = machineTicks();
      const pg1 = pgBackends(db);
      let pgTicks = 0;
      for (const [p, ticks] of pg1) pgTicks += ticks - (pg0.get(p) ?? 0);
      const srvTicks = sum(tree.map(procTicks)) - srv0;
      const loadgenTicks = (cpu.user + cpu.system) / 1000 / TICK_MS;
      const sorted = Float64Array.from(lat).sort();
      const requests = lat.length + non2xx;
      const per = (ticks: number) => (requests ? (ticks * TICK_MS) / requests : NaN);
      const totalTicks = m1.total - m0.total;
      const others = m1.busy - m0.busy - srvTicks - pgTicks - loadgenTicks;
      rss.sort((a, b) => a - b);
      return {
        seconds: elapsed,
        requests,
        rps: lat.length / elapsed,
        p50: percentile(sorted, 50),
        p95: percentile(sorted, 95),
        p99: percentile(sorted, 99),
        mean: lat.reduce((a, b) => a + b, 0) / (lat.length || 1),
        errors,
        non2xx,
        rssPeakMB: rss[rss.length - 1] ?? rssMB(pid),
        rssMedianMB: rss[Math.floor(rss.length / 2)] ?? rssMB(pid),
        rssProcessPeakMB: processPeak,
        processes: tree.length,
        serverCpuMs: per(srvTicks),
        pgCpuMs: per(pgTicks),
        loadgenCpuMs: per(loadgenTicks),
        othersCpuShare: totalTicks > 0 ? Math.max(0, others) / totalTicks : NaN,
      };
    },
  };
}

/** One fixed-concurrency autocannon run against `t`, sampling the server `pid` meanwhile. */
export async function measure(t: Target, seconds: number, pid: number, db: string) {
  const lat: number[] = [];
  let errors = 0;
  let non2xx = 0;
  const sampling = startSampling(pid, db);
  let n = 0;
  await new Promise<void>((resolve, reject) => {
    const inst = autocannon(
      {
        url: t.url,
        connections: CONNECTIONS,
        pipelining: 1,
        duration: seconds,
        ...(t.rate !== undefined ? { overallRate: t.rate } : {}),
        method: t.method ?? 'GET',
        headers: t.headers ?? {},
        ...(t.body !== undefined ? { body: t.body } : {}),
        ...(t.perClient
          ? {
              setupClient: (c: autocannon.Client) => {
                const r = t.perClient![n++ % t.perClient!.length]!;
                c.setRequests([
                  { method: t.method ?? 'GET', path: r.path, headers: t.headers, body: r.body },
                ] as never);
              },
            }
          : {}),
      },
      (err) => (err ? reject(err as Error) : resolve()),
    );
    inst.on('response', (_c: unknown, status: number, _b: number, ms: number) => {
      if (status >= 200 && status < 300) lat.push(ms);
      else non2xx++;
    });
    inst.on('reqError', () => errors++);
  });
  return sampling.finish(lat, non2xx, errors);
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Median of each numeric field over runs (peak RSS: the maximum). */
export function summarise(runs: RunResult[]): RunResult {
  const out = {} as Record<keyof RunResult, number>;
  for (const k of Object.keys(runs[0]!) as Array<keyof RunResult>)
    out[k] = median(runs.map((r) => r[k]));
  out.rssPeakMB = Math.max(...runs.map((r) => r.rssPeakMB));
  out.rssProcessPeakMB = Math.max(...runs.map((r) => r.rssProcessPeakMB));
  out.errors = runs.reduce((a, r) => a + r.errors, 0);
  out.non2xx = runs.reduce((a, r) => a + r.non2xx, 0);
  return out;
}
