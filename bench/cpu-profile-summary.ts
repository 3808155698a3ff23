import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

/** The monotonic clock V8 stamps its samples with (the same as `process.hrtime`), in µs. */
export const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * A V8 CPU profile (`node --cpu-prof`) reduced to self time by function, counting only the
 * samples taken inside `windows` (µs, `nowUs`) and leaving out idle: what the main thread
 * was busy with while the load ran. One file of `dir` (a process writes one at exit).
 */
export function busyByFunction(
  dir: string,
  windows: ReadonlyArray<readonly [number, number]>,
): Map<string, number> {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error(`no .cpuprofile in ${dir}`);
  const prof = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
    nodes: ProfileNode[];
    startTime: number;
    samples: number[];
    timeDeltas: number[];
  };
  const selfUs = new Map<number, number>();
  let t = prof.startTime;
  for (let i = 0; i < prof.samples.length; i++) {
    t += prof.timeDeltas[i] ?? 0;
    const dt = prof.timeDeltas[i + 1] ?? 0; // a sample lasts until the next one
    if (windows.some(([a, b]) => t >= a && t <= b))
      selfUs.set(prof.samples[i]!, (selfUs.get(prof.samples[i]!) ?? 0) + dt);
  }
  const out = new Map<string, number>();
  for (const n of prof.nodes) {
    const us = selfUs.get(n.id) ?? 0;
    if (us === 0 || n.callFrame.functionName === '(idle)') continue;
    const url = n.callFrame.url;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    const where = pkg ?? (url.includes('/dist/') ? url.split('/dist/')[1] : url) ?? '';
    const key = `${n.callFrame.functionName || '(anonymous)'} ${where}:${n.callFrame.lineNumber + 1}`;
    out.set(key, (out.get(key) ?? 0) + us);
  }
  return out;
}

/**
 * Two profiles' busy time per request side by side: the total, then the functions whose
 * time per request grew most from `off` to `on` (and `top` of them).
 */
export function compareBusy(
  off: Map<string, number>,
  offRequests: number,
  on: Map<string, number>,
  onRequests: number,
  top = 25,
): string {
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const perOff = total(off) / offRequests;
  const perOn = total(on) / onRequests;
  const keys = new Set([...off.keys(), ...on.keys()]);
  const diffs = [...keys]
    .map((k) => ({
      k,
      off: (off.get(k) ?? 0) / offRequests,
      on: (on.get(k) ?? 0) / onRequests,
    }))
    .map((d) => ({ ...d, diff: d.on - d.off }))
    .sort((a, b) => b.diff - a.diff)
    .slice(0, top);
  return [
    `main thread busy (profile samples): off ${perOff.toFixed(1)} µs/req, on ${perOn.toFixed(1)} ` +
      `µs/req (${((perOn / perOff - 1) * 100).toFixed(1)} % more)`,
    '| function | off µs/req | on µs/req | on − off |',
    '|---|--:|--:|--:|',
    ...diffs.map(
      (d) => `| ${d.k} | ${d.off.toFixed(2)} | ${d.on.toFixed(2)} | ${d.diff.toFixed(2)} |`,
    ),
  ].join('\n');
}
