/**
 * `npx tsx bench/memory-probe.ts [--scale=10m] [--seconds=15] [--env=K=V…]`: where an Arbor process's
 * resident memory goes as the bench's cases load it in turn (a children page, get, who-can, STS,
 * registry token): after each, RSS from /proc and V8's own account from /metrics (each heap space's
 * size, external memory, array buffers). Why: RSS per process is one of the benchmark's targets
 * (≤ 200 MB at 10M groups), and a figure for the whole process does not say what to cut.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { ensureDatabase, seedState } from './db.js';
import {
  ensureRepo,
  exchange,
  stsExchangeRequest,
  prepareSts,
  registryTokenRequest,
} from './fixtures.js';
import { measure } from './load.js';
import { freePort, startArbor } from './procs.js';
import { REGISTRY_REPO, REGISTRY_SERVICE, orgUid, scaleOf, teamUid } from './scale.js';

const args = process.argv.slice(2);
const scale = scaleOf(args);
const seconds = Number(args.find((a) => a.startsWith('--seconds='))?.slice(10) ?? 15);
const db = await ensureDatabase(scale);
const c = new pg.Client({ connectionString: db.url });
await c.connect();
if (!(await seedState(c, scale)).seeded) throw new Error('run npm run bench first (seeds)');
const metricsPort = await freePort();
/** `--env=K=V` (repeatable): set on Arbor's process, e.g. `--env=MALLOC_ARENA_MAX=2`. */
const extraEnv = Object.fromEntries(
  args
    .filter((a) => a.startsWith('--env='))
    .map((a) => {
      const kv = a.slice('--env='.length);
      return [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)];
    }),
);
const arbor = await startArbor(db.url, [], 1, { METRICS_PORT: String(metricsPort), ...extraEnv });
const MB = 1024 * 1024;
async function report(after: string): Promise<void> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const v = (re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);
  const spaces = [...text.matchAll(/^nodejs_heap_space_size_total_bytes\{space="(\w+)"\} (\d+)/gm)]
    .map(([, s, b]) => `${s} ${(Number(b) / MB).toFixed(0)}`)
    .join(', ');
  const gc = [
    ...text.matchAll(/^nodejs_gc_duration_seconds_(sum|count)\{kind="(\w+)"\} ([\d.e-]+)/gm),
  ]
    .map(([, what, kind, x]) => `${kind} ${what} ${Number(x).toFixed(what === 'sum' ? 2 : 0)}`)
    .join(', ');
  // The kernel's account by mapping (/proc/<pid>/smaps): `[heap]` is malloc's brk heap,
  // anonymous mappings are V8's pages and malloc's mmap arenas, the rest are files.
  const byKind = new Map<string, number>();
  let kind = 'anon';
  for (const line of readFileSync(`/proc/${arbor.pid}/smaps`, 'utf8').split('\n')) {
    const m = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (m) kind = m[1] === '' ? 'anon' : m[1]!.startsWith('/') ? 'files' : m[1]!;
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) byKind.set(kind, (byKind.get(kind) ?? 0) + Number(rss[1]) / 1024);
  }
  const maps = [...byKind]
    .sort((x, y) => y[1] - x[1])
    .map(([k, mb]) => `${k} ${mb.toFixed(0)}`)
    .join(', ');
  console.log(
    `${after}: RSS ${(v(/^process_resident_memory_bytes (\d+)/m) / MB).toFixed(0)} MB; heap total ` +
      `${(v(/^nodejs_heap_size_total_bytes (\d+)/m) / MB).toFixed(0)}, used ` +
      `${(v(/^nodejs_heap_size_used_bytes (\d+)/m) / MB).toFixed(0)}, external ` +
      `${(v(/^nodejs_external_memory_bytes (\d+)/m) / MB).toFixed(0)} MB; spaces (MB): ${spaces}; ` +
      `event loop lag p99 ${(v(/^nodejs_eventloop_lag_p99_seconds ([\d.e-]+)/m) * 1000).toFixed(1)} ms, ` +
      `max ${(v(/^nodejs_eventloop_lag_max_seconds ([\d.e-]+)/m) * 1000).toFixed(1)} ms; GC ${gc}; ` +
      `smaps RSS (MB): ${maps}`,
  );
}
try {
  await report('idle');
  const sts = await prepareSts(c, arbor.url, scale);
  const token = await exchange(arbor.url, sts, sts.identities[0]!);
  const auth = { authorization: `Bearer ${token}` };
  const load = async (name: string, t: Parameters<typeof measure>[0]) => {
    const r = await measure(t, seconds, arbor.pid, db.name);
    await report(`${name} (${r.rps.toFixed(0)}/s)`);
  };
  await load('children page', {
    url: `${arbor.url}/iam/v2beta1/groups?uidp.children_of=${orgUid(0)}&order_by=name&page_size=50`,
    headers: auth,
  });
  await load('get', { url: `${arbor.url}/iam/v2beta1/groups/${teamUid(0, 0)}`, headers: auth });
  await load('who-can', {
    url: `${arbor.url}/iam/v2beta1/access:whoCan?group=${teamUid(0, 0)}&capability=groups.list&page_size=50`,
    headers: auth,
  });
  await load('sts', stsExchangeRequest(arbor.url, sts));
  await sts.issuer.stop();
  const repo = await ensureRepo(arbor.url, orgUid(0), REGISTRY_REPO);
  await load('registry token', registryTokenRequest(arbor.url, repo, REGISTRY_SERVICE, token));
} finally {
  await arbor.stop();
  await c.end();
}
