/**
 * `npx tsx bench/profile.ts [--quick] [--keep=DIR] [--sql=FILE] [get,access.check,sts,registry.token,children.p1,grpc.get,grpc1.get,baseline.children.p1,…]`:
 * where Arbor's own CPU goes per request. For each case, start Arbor with `--cpu-prof`,
 * load it as bench/run.ts does (16 connections: autocannon for REST, the closed-loop
 * generator for gRPC), stop it, and sum the profile's self time by package / source file
 * and by function. Writes bench/results/<date>-<scale>-profile.md.
 *
 * `baseline.<case>` profiles the node:http + pg baseline on the same case instead, running
 * the SQL a bench run captured (`--sql=bench/results/<…>-sql.json`, same scale): the two
 * profiles side by side say where Arbor spends what the baseline does not.
 */
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { ensureDatabase, seedState } from './db.js';
import {
  ensureRepo,
  exchange,
  stsExchangeRequest,
  prepareSts,
  registryTokenRequest,
} from './fixtures.js';
import { closedLoop } from './closed-loop.js';
import { grpcPairs, pairTransports } from './grpc-cases.js';
import { measure, type RunResult, type Target } from './load.js';
import { ROOT, startArbor, startBaseline } from './procs.js';
import { PAGE_SIZE, REGISTRY_REPO, REGISTRY_SERVICE, orgUid, scaleOf, teamUid } from './scale.js';

const scale = scaleOf(process.argv.slice(2));
/** `--keep=DIR`: also keep each case's raw .cpuprofile there. */
const keep = process.argv.find((a) => a.startsWith('--keep='))?.slice('--keep='.length);
/** `--sql=FILE`: the captured SQL the baseline runs (a bench run's `<stamp>-sql.json`). */
const sqlFile = process.argv.find((a) => a.startsWith('--sql='))?.slice('--sql='.length);
const wanted = (
  process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 'get,sts,children.p1'
).split(',');

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

function bucketOf(url: string, pkg: string | undefined, fn: string): string {
  if (pkg) return `npm:${pkg}`;
  if (url.includes('/src/')) return `src/${url.split('/src/')[1]}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/').slice(0, 2).join('/')}`;
  return fn || '(anonymous)';
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * Self time by bucket (a package under node_modules, a file of ours, a node core module,
 * or a V8 pseudo-frame) and by function, counting only the samples taken during the
 * measured run: V8 stamps samples with the same monotonic clock as `process.hrtime`.
 */
function summarise(file: string, window: [number, number], requests: number): string {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as {
    nodes: ProfileNode[];
    startTime: number;
    samples: number[];
    timeDeltas: number[];
  };
  const selfUs = new Map<number, number>();
  let t = prof.startTime;
  for (let i = 0; i < prof.samples.length; i++) {
    const dt = prof.timeDeltas[i + 1] ?? 0; // a sample lasts until the next one
    t += prof.timeDeltas[i] ?? 0;
    if (t >= window[0] && t <= window[1])
      selfUs.set(prof.samples[i]!, (selfUs.get(prof.samples[i]!) ?? 0) + dt);
  }
  const byBucket = new Map<string, number>();
  const byFn = new Map<string, number>();
  let busy = 0;
  for (const n of prof.nodes) {
    const us = selfUs.get(n.id) ?? 0;
    if (us === 0) continue;
    const url = n.callFrame.url;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    const bucket = bucketOf(url, pkg, n.callFrame.functionName);
    if (bucket !== '(idle)') busy += us;
    byBucket.set(bucket, (byBucket.get(bucket) ?? 0) + us);
    const fn =
      bucket === '(idle)'
        ? bucket
        : `${n.callFrame.functionName || '(anonymous)'} ${pkg ?? url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;
    byFn.set(fn, (byFn.get(fn) ?? 0) + us);
  }
  const top = (m: Map<string, number>, k: number) =>
    [...m]
      .filter(([b]) => b !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, k)
      .map(
        ([b, us]) =>
          `| ${b} | ${((100 * us) / busy).toFixed(1)} % | ${(us / 1000 / requests).toFixed(3)} |`,
      );
  return [
    `main thread non-idle samples: ${(busy / 1000).toFixed(0)} ms over ${requests} requests = ` +
      `${(busy / 1000 / requests).toFixed(3)} ms/request. Samples are wall time on non-idle ` +
      'frames (more than CPU time when the machine is contended) and miss threadpool work ' +
      '(WebCrypto): read the shares, not the milliseconds.',
    '',
    '| where (self time) | share of busy | ms/request |',
    '|---|--:|--:|',
    ...top(byBucket, 14),
    '',
    '| function | share of busy | ms/request |',
    '|---|--:|--:|',
    ...top(byFn, 20),
  ].join('\n');
}

async function main(): Promise<void> {
  const db = await ensureDatabase(scale);
  const c = new pg.Client({ connectionString: db.url, application_name: 'arbor-bench' });
  await c.connect();
  if (!(await seedState(c, scale)).seeded) throw new Error('run npm run bench first (seeds)');
  const out: string[] = [`# Arbor CPU profile (${scale.name}, ${new Date().toISOString()})`];
  for (const name of wanted) {
    const dir = mkdtempSync(join(tmpdir(), 'arbor-prof-'));
    if (name.startsWith('baseline.')) {
      out.push(...(await profileBaseline(db, name, dir)));
      rmSync(dir, { recursive: true, force: true });
      continue;
    }
    const arbor = await startArbor(db.url, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    let r: RunResult;
    const window: [number, number] = [0, 0];
    try {
      const sts = await prepareSts(c, arbor.url, scale);
      const token = await exchange(arbor.url, sts, sts.identities[0]!);
      const { rows } = await c.query<{ uid: string }>(
        'SELECT uid FROM groups WHERE parent_uid = $1 ORDER BY uid LIMIT 1',
        [teamUid(0, 0)],
      );
      const auth = { authorization: `Bearer ${token}` };
      const targets: Record<string, Target> = {
        get: { url: `${arbor.url}/iam/v2beta1/groups/${rows[0]!.uid}`, headers: auth },
        'children.p1': {
          url: `${arbor.url}/iam/v2beta1/groups?uidp.children_of=${orgUid(0)}&order_by=name&page_size=${PAGE_SIZE}`,
          headers: auth,
        },
        'descendants.name': {
          url: `${arbor.url}/iam/v2beta1/groups?uidp.descendants_of=${orgUid(0)}&order_by=name&page_size=${PAGE_SIZE}`,
          headers: auth,
        },
        sts: stsExchangeRequest(arbor.url, sts),
        // bench/cases.ts's access.check: the same group as get.
        'access.check': {
          url: `${arbor.url}/iam/v2beta1/access:check`,
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ capability: 'groups.list', groupUid: rows[0]!.uid }),
        },
        // bench/cases.ts's access.whoCan: the first page at the same group.
        'access.whoCan': {
          url: `${arbor.url}/iam/v2beta1/access:whoCan?group=${rows[0]!.uid}&capability=groups.list&page_size=50`,
          headers: auth,
        },
        'registry.token': registryTokenRequest(
          arbor.url,
          await ensureRepo(arbor.url, orgUid(0), REGISTRY_REPO),
          REGISTRY_SERVICE,
          token,
        ),
      };
      const restUrls = {
        get: targets.get!.url,
        'children.p1': targets['children.p1']!.url,
        'descendants.name': targets['descendants.name']!.url,
      };
      // `grpc1.<case>`: the gRPC case on one multiplexed session, as a gRPC channel calls.
      const shared = name.startsWith('grpc1.');
      const pairName = shared ? `grpc.${name.slice('grpc1.'.length)}` : name;
      const pair = grpcPairs({ restUrls, getUid: rows[0]!.uid, org: orgUid(0) }).find(
        (p) => p.name === pairName,
      );
      const load = async (seconds: number): Promise<RunResult> => {
        if (!pair) return measure(targets[name]!, seconds, arbor.pid, db.name);
        const t = pairTransports(arbor.url, pair, token);
        return (await closedLoop(shared ? t.grpcShared : t.grpc, seconds, arbor.pid, db.name))
          .result;
      };
      await load(scale.warmupSeconds);
      window[0] = nowUs();
      r = await load(scale.runSeconds);
      window[1] = nowUs();
      await sts.issuer.stop();
    } finally {
      await arbor.stop();
    }
    out.push(...section(name, 'Arbor', dir, window, r));
    rmSync(dir, { recursive: true, force: true });
  }
  await c.end();
  const path = join(
    ROOT,
    'bench',
    'results',
    `${new Date().toISOString().slice(0, 10)}-${scale.name}-profile.md`,
  );
  writeFileSync(path, `${out.join('\n')}\n`);
  console.log(`wrote ${path}`);
}

/**
 * A profiled case's section of the report: its measured run (`server` names whose CPU it
 * is), then where the main thread's time went; the raw profile is kept too with `--keep`.
 */
function section(
  name: string,
  server: string,
  dir: string,
  window: [number, number],
  r: RunResult,
): string[] {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  const lines = [
    `\n## ${name}\n\nmeasured run: ${r.rps.toFixed(0)} req/s, p50 ${r.p50.toFixed(2)} ms, ` +
      `${server} CPU ${r.serverCpuMs.toFixed(2)} ms/req (all threads), ` +
      `others' CPU ${(r.othersCpuShare * 100).toFixed(0)} %\n`,
    file ? summarise(join(dir, file), window, r.requests) : '(no profile written)',
  ];
  console.log(lines.join('\n'));
  if (file && keep) {
    // For a look beyond self time (DevTools, or inclusive time per function).
    mkdirSync(keep, { recursive: true });
    copyFileSync(join(dir, file), join(keep, `${name}.cpuprofile`));
    console.log(`kept ${join(keep, `${name}.cpuprofile`)}`);
  }
  return lines;
}

/** `baseline.<case>`: the baseline server under the same load, profiled the same way. */
async function profileBaseline(
  db: { url: string; name: string },
  name: string,
  dir: string,
): Promise<string[]> {
  if (!sqlFile) throw new Error(`${name} needs --sql=FILE (a bench run's captured SQL)`);
  const base = await startBaseline(db.url, sqlFile, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  const target: Target = { url: `${base.url}/case/${name.slice('baseline.'.length)}` };
  let r: RunResult;
  const window: [number, number] = [0, 0];
  try {
    await measure(target, scale.warmupSeconds, base.pid, db.name);
    window[0] = nowUs();
    r = await measure(target, scale.runSeconds, base.pid, db.name);
    window[1] = nowUs();
  } finally {
    await base.stop();
  }
  return section(name, 'baseline', dir, window, r);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
