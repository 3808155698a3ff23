/**
 * `npm run bench -- --only=cli-startup [--runs=20]` (or `npx tsx bench/cli-startup.ts`): how
 * long `arbor --help` and `arbor --version` take against a bare `node -e 0` on the same
 * machine, the built entry (`node dist/src/main.js`, what `bin` runs; built first). The three
 * run in turn, `runs` times each, so a busy moment slows all of them alike; the medians and
 * their ratio to `node -e 0` are printed (the target: at most 1.5×).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median } from './load.js';
import { ROOT, buildOnce } from './procs.js';

const COMMANDS: Record<string, string[]> = {
  'node -e 0': ['-e', '0'],
  'arbor --help': [join(ROOT, 'dist', 'src', 'main.js'), '--help'],
  'arbor --version': [join(ROOT, 'dist', 'src', 'main.js'), '--version'],
};

/** Wall time of one run of `node args`, in ms. @throws when it does not exit 0. */
function once(args: string[]): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0)
    throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr.toString()}`);
  return ms;
}

/** @returns the median wall time (ms) of each command over `runs` interleaved runs. */
export function benchCliStartup(runs = 20, log = console.log): Record<string, number> {
  buildOnce();
  const times: Record<string, number[]> = {};
  for (const name of Object.keys(COMMANDS)) once(COMMANDS[name]!); // warm the file cache
  for (let i = 0; i < runs; i++)
    for (const [name, args] of Object.entries(COMMANDS)) (times[name] ??= []).push(once(args));
  const medians = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
  const base = medians['node -e 0']!;
  for (const [name, ms] of Object.entries(medians))
    log(`${name.padEnd(16)} median ${ms.toFixed(0).padStart(5)} ms  ${(ms / base).toFixed(2)}×`);
  return medians;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const runs = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? '20');
  benchCliStartup(runs);
}
