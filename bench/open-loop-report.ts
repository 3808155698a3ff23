/**
 * The open-loop profile's types and its Markdown report (bench/open-loop.ts runs it): one
 * row per case, and the open-loop profile's targets judged from the rows.
 */
import type { RunResult } from './load.js';
import { CONNECTIONS, type Scale } from './scale.js';

/** One request shape of the profile. */
export interface OpenCase {
  name: string;
  label: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  /** Bodies taken in turn (the STS: one per identity); absent for a GET. */
  bodies?: string[];
  /** A new TLS connection per request (and `Connection: close`), or a kept-alive pool. */
  fresh: boolean;
  /**
   * With `fresh`: each new connection resumes the TLS session of an earlier one (a returning
   * client: an https.Agent without keep-alive keeps its sessions), skipping the full handshake.
   */
  resume?: boolean;
  /** The kept-alive pool's most connections (`--pool=N`). */
  pool: number;
}

export interface OpenResult {
  /** Requests sent, answered 2xx, refused (other status), failed (connection or timeout). */
  sent: number;
  ok: number;
  non2xx: number;
  errors: number;
  /** Milliseconds from the intended send time to the end of the answer (successes). */
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** The generator's worst lateness behind its schedule (counted in the latencies). */
  maxLagMs: number;
  /** The 99th percentile of that lateness, over every request sent. */
  lagP99: number;
  /**
   * The same answers timed from when the generator actually sent them: what the server and
   * the network took, without the generator's own stalls (two processes share 2 cores).
   */
  sentP50: number;
  sentP95: number;
  sentP99: number;
  rps: number;
  /** Arbor's CPU milliseconds per request (its process tree, /proc), and PostgreSQL's. */
  serverCpuMs: number;
  pgCpuMs: number;
  loadgenCpuMs: number;
  /** Answers per second per Arbor vCPU: 1000 / serverCpuMs. */
  perVcpu: number;
  rssPeakMB: number;
  othersCpuShare: number;
}

const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '–');

export function renderOpenLoop(
  meta: Record<string, unknown>,
  out: Array<{ case: OpenCase; saturation: RunResult; rate: number; run: OpenResult }>,
): string {
  const rows = out.map(({ case: c, saturation: s, rate, run: r }) =>
    [
      c.name,
      c.fresh ? (c.resume ? 'new per request, session resumed' : 'new per request') : 'kept alive',
      f(s.rps, 0),
      f(1000 / s.serverCpuMs, 0),
      String(rate),
      f(r.rps, 0),
      `${f(r.p50)} / ${f(r.p95)} / ${f(r.p99)}`,
      f(r.p99 / r.p50, 1),
      `${f(r.sentP50)} / ${f(r.sentP95)} / ${f(r.sentP99)}`,
      f(r.perVcpu, 0),
      f(r.rssPeakMB, 0),
      `${r.non2xx + r.errors}`,
      `${f(r.lagP99, 1)} / ${f(r.maxLagMs, 1)}`,
      f(r.loadgenCpuMs, 2),
      `${f(r.othersCpuShare * 100, 0)} %`,
    ].join(' | '),
  );
  const by = (n: string) => out.find((x) => x.case.name === n);
  const targets: string[] = [];
  const sts = by('sts');
  if (sts)
    targets.push(
      `- STS with TLS and a new connection each ≥ 1,200/s per Arbor vCPU: ` +
        `${f(1000 / sts.saturation.serverCpuMs, 0)}/s per vCPU at saturation, ` +
        `${f(sts.run.perVcpu, 0)} paced: **${1000 / sts.saturation.serverCpuMs >= 1200 ? 'met' : 'missed'}**`,
    );
  const resumed = by('sts.resumed');
  if (resumed)
    targets.push(
      `- STS with TLS on a resumed session ≥ 1,200/s per Arbor vCPU: ` +
        `${f(1000 / resumed.saturation.serverCpuMs, 0)}/s per vCPU at saturation, ` +
        `${f(resumed.run.perVcpu, 0)} paced: **${1000 / resumed.saturation.serverCpuMs >= 1200 ? 'met' : 'missed'}**`,
    );
  for (const n of ['get', 'access.check']) {
    const x = by(n);
    if (x)
      targets.push(
        `- ${n} at ${f(x.rate / x.saturation.rps, 2)}× saturation, p99 ≤ 5 ms and p99/p50 ≤ 3: ` +
          `p99 ${f(x.run.p99)} ms, p99/p50 ${f(x.run.p99 / x.run.p50, 1)}: ` +
          `**${x.run.p99 <= 5 && x.run.p99 / x.run.p50 <= 3 ? 'met' : 'missed'}** ` +
          `(from the actual send, without the generator's lateness: p99 ${f(x.run.sentP99)} ms, ` +
          `p99/p50 ${f(x.run.sentP99 / x.run.sentP50, 1)}; the generator's own p99 lateness ` +
          `${f(x.run.lagP99, 1)} ms)`,
      );
  }
  return [
    `# Open-loop TLS profile (${String((meta.scale as Scale).name)}, ${String(meta.started)})`,
    '',
    `Arbor with TLS (self-signed P-256), one process; saturation by ${CONNECTIONS} closed-loop ` +
      `clients for ${String(meta.probeSeconds)} s, then an open loop at ${String(meta.load)}× ` +
      `that rate for ${String(meta.seconds)} s, latency from the intended send time. ` +
      'Per vCPU = answers / Arbor CPU seconds (/proc). The generator runs on the same machine: ' +
      'its lateness behind schedule is inside the latencies, and its TLS handshakes take CPU ' +
      `Arbor could have used. ${String(meta.cpu)}, ${String(meta.node)}; ` +
      `before: ${String(meta.uptimeBefore)}.`,
    '',
    '| case | connection | saturation /s | saturation /s per vCPU | paced at /s | answered /s | p50 / p95 / p99 ms | p99/p50 | from the actual send p50 / p95 / p99 ms | paced /s per vCPU | RSS MB | failed | generator late p99 / max ms | generator CPU ms/req | others’ CPU |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...rows.map((r) => `| ${r} |`),
    '',
    ...targets,
  ].join('\n');
}
