/** One window of an interleaved run (bench/tracing-toggle-preload.mjs writes them). */
export interface ToggleWindow {
  /** Whether tracing was on in it. */
  on: boolean;
  /** When it began on the monotonic clock, µs (`nowUs`, and V8's profiles). */
  start: number;
  /** Wall time, µs. */
  us: number;
  /** The server process's CPU time (all its threads), µs. */
  cpuUs: number;
  /** Responses it finished. */
  n: number;
}

/** Both sides of an interleaved run, and how sure the throughput ratio is. */
export interface InterleavedSummary {
  pairs: number;
  off: { rps: number; cpuUsPerReq: number };
  on: { rps: number; cpuUsPerReq: number };
  /** on ÷ off throughput over every pair, and its 95 % bootstrap interval over the pairs. */
  ratio: number;
  low: number;
  high: number;
  /** on ÷ off CPU per request. */
  cpuRatio: number;
}

interface Sums {
  n: number;
  us: number;
  cpuUs: number;
}

/**
 * Adjacent windows taken as pairs (one on, one off), the throughput of each side over all
 * of them, and a 95 % interval for the ratio from resampling the pairs (2,000 times): the
 * pairs, not the windows, are the unit, because the machine's state is shared by the two
 * windows of a pair far more than by windows a second apart.
 */
export function summarizeWindows(windows: readonly ToggleWindow[]): InterleavedSummary {
  const pairs: Array<{ on: ToggleWindow; off: ToggleWindow }> = [];
  for (let i = 0; i + 1 < windows.length; i += 2) {
    const a = windows[i]!;
    const b = windows[i + 1]!;
    if (a.on === b.on) throw new Error(`windows ${i} and ${i + 1} are on the same side`);
    pairs.push(a.on ? { on: a, off: b } : { on: b, off: a });
  }
  if (pairs.length === 0) throw new Error('no pair of windows');
  const sums = (ps: typeof pairs, side: 'on' | 'off'): Sums =>
    ps.reduce(
      (s, p) => ({ n: s.n + p[side].n, us: s.us + p[side].us, cpuUs: s.cpuUs + p[side].cpuUs }),
      { n: 0, us: 0, cpuUs: 0 },
    );
  const rps = (s: Sums) => (s.n / s.us) * 1e6;
  const ratioOf = (ps: typeof pairs) => rps(sums(ps, 'on')) / rps(sums(ps, 'off'));
  const resampled: number[] = [];
  for (let r = 0; r < 2000; r++)
    resampled.push(ratioOf(pairs.map(() => pairs[Math.floor(Math.random() * pairs.length)]!)));
  resampled.sort((x, y) => x - y);
  const on = sums(pairs, 'on');
  const off = sums(pairs, 'off');
  return {
    pairs: pairs.length,
    off: { rps: rps(off), cpuUsPerReq: off.cpuUs / off.n },
    on: { rps: rps(on), cpuUsPerReq: on.cpuUs / on.n },
    ratio: rps(on) / rps(off),
    low: resampled[Math.floor(resampled.length * 0.025)]!,
    high: resampled[Math.floor(resampled.length * 0.975)]!,
    cpuRatio: on.cpuUs / on.n / (off.cpuUs / off.n),
  };
}
