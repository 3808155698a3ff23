// Preloaded (`node --import`) into a traced Arbor server by the tracing bench's `--toggle`
// mode (bench/tracing-bench.ts), so that one process can be measured with and without
// tracing. Bench only: no image or manifest starts Arbor with it.
//
// Without BENCH_TOGGLE_EVERY_MS, each SIGUSR2 flips tracing: the first pauses its hooks, the
// next resumes them (the bench measures each window from outside).
//
// With BENCH_TOGGLE_EVERY_MS=N (`--interleave=N`), the first SIGUSR2 starts flipping tracing
// every N ms by itself, under one continuous load, and the next stops it (tracing on again)
// and writes every window it measured to BENCH_TOGGLE_REPORT as JSON: whether tracing was
// on, its start on the monotonic clock (as V8's profiles stamp their samples), its wall time
// and the process's CPU time in µs, and the responses it finished. Windows a tenth of a
// second long alternate hundreds of times a minute, so the machine's slow spells
// (seconds long on a small VM) fall on both sides alike instead of on one window. They come
// in pairs, one of each side, in an order drawn at random for each pair and of lengths drawn
// from 0.75 N to 1.25 N: with a fixed order and length, work the server does on a period
// (a timer every second) fell in the same side's windows every time, a 3 % bias in a
// `--control` run.
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';

const spans = new URL('../dist/src/tracing/spans.js', import.meta.url);
const every = Number(process.env.BENCH_TOGGLE_EVERY_MS ?? 0);
const reportFile = process.env.BENCH_TOGGLE_REPORT;

let finished = 0;
if (every > 0) subscribe('http.server.response.finish', () => finished++);

let pauseTracing;
let resume;
const flip = () => {
  if (resume === undefined) resume = pauseTracing();
  else {
    resume();
    resume = undefined;
  }
};
const tracing = () => resume === undefined;

// BENCH_TOGGLE_SPIN_US=X (the bench's BENCH_ON_BENCH_TOGGLE_SPIN_US, with `--control`): X µs
// of busy CPU added to every request while "on", to calibrate what a known cost per request
// does to the throughput on this machine.
const spin = Number(process.env.BENCH_TOGGLE_SPIN_US ?? 0);
if (spin > 0)
  subscribe('http.server.request.start', () => {
    if (!tracing()) return;
    const until = process.hrtime.bigint() + BigInt(Math.round(spin * 1000));
    while (process.hrtime.bigint() < until);
  });

/** The interleaving under way: its timer, its windows so far, and the one now open. */
let run;
/** The process's CPU time so far (all its threads), µs. */
const cpuUs = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};
const openWindow = () => ({ on: tracing(), t: process.hrtime.bigint(), cpu: cpuUs(), n: finished });
const closeWindow = (w) => ({
  on: w.on,
  start: Number(w.t / 1000n),
  us: Number((process.hrtime.bigint() - w.t) / 1000n),
  cpuUs: cpuUs() - w.cpu,
  n: finished - w.n,
});

process.on('SIGUSR2', () => {
  void import(spans.href).then((m) => {
    pauseTracing = m.pauseTracing;
    if (every <= 0) {
      flip();
      process.stderr.write(`[toggle] tracing ${tracing() ? 'on' : 'paused'}\n`);
      return;
    }
    if (run === undefined) {
      if (Math.random() < 0.5) flip();
      run = { windows: [], open: openWindow() };
      const next = () => {
        run.timer = setTimeout(
          () => {
            run.windows.push(closeWindow(run.open));
            // The second of a pair is the other side; the first of the next, either.
            if (run.windows.length % 2 === 1 || Math.random() < 0.5) flip();
            run.open = openWindow();
            next();
          },
          every * (0.75 + Math.random() / 2),
        );
      };
      next();
      process.stderr.write(`[toggle] interleaving every ${every} ms\n`);
      return;
    }
    clearTimeout(run.timer);
    run.windows.push(closeWindow(run.open));
    if (!tracing()) flip();
    writeFileSync(reportFile, JSON.stringify(run.windows));
    process.stderr.write(`[toggle] ${run.windows.length} windows written\n`);
    run = undefined;
  });
});
