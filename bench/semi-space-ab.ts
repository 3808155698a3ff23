/**
 * `npx tsx bench/semi-space-ab.ts [--quick] [--rounds=3] [--seconds=10] [--side=MB[,flag…][,main=FILE]]… [case]`:
 * the list page (children.p1, or descendants.name) against several Arbor processes at once,
 * each with its own young generation (`MB`, the semi-space) and V8 flags, and, with
 * `main=<tree>/dist/src/main.js`, another tree's build (a worktree of the commit before a
 * change, built there: a code change measured the same way), measured alternately in one
 * run: CPU per request from /proc, throughput and RSS. Without `--side`,
 * the image's flags against a 16 MB semi-space (Node's default). Why: the profile of the
 * list path puts 7–19 % of Arbor's samples in the garbage collector against 3 % for the
 * baseline, and the young generation's size and the old one's growth trade that against RSS.
 */
import pg from 'pg';
import { ensureDatabase, seedState } from './db.js';
import { exchange, prepareSts } from './fixtures.js';
import { measure, median, type RunResult } from './load.js';
import { IMAGE_SEMI_SPACE_MB, startArbor, type Child } from './procs.js';
import { PAGE_SIZE, orgUid, scaleOf } from './scale.js';

const args = process.argv.slice(2);
const scale = scaleOf(args);
const num = (n: string, d: number) =>
  Number(args.find((a) => a.startsWith(`--${n}=`))?.slice(n.length + 3) ?? d);
const rounds = num('rounds', 3);
const seconds = num('seconds', 10);
const which = args.find((a) => !a.startsWith('--')) ?? 'children.p1';
const anchor = which === 'descendants.name' ? 'uidp.descendants_of' : 'uidp.children_of';

const db = await ensureDatabase(scale);
const c = new pg.Client({ connectionString: db.url });
await c.connect();
if (!(await seedState(c, scale)).seeded) throw new Error('run npm run bench first (seeds)');
/**
 * `--side=4,--heap-growing-percent=0`: a semi-space of 4 MB and that V8 flag, given after
 * the image's own flags (startArbor), which it overrides; the other image flags stay.
 */
const wanted = args
  .filter((a) => a.startsWith('--side='))
  .map((a) => a.slice('--side='.length).split(','));
const specs = wanted.length
  ? wanted.map(([mb, ...rest]) => ({
      mb: Number(mb),
      flags: rest.filter((f) => !f.startsWith('main=')),
      main: rest.find((f) => f.startsWith('main='))?.slice('main='.length),
    }))
  : [
      { mb: IMAGE_SEMI_SPACE_MB, flags: [], main: undefined },
      { mb: 16, flags: [], main: undefined },
    ];
const sides: Array<{ mb: number; label: string; arbor: Child; runs: RunResult[] }> = [];
try {
  for (const { mb, flags, main } of specs)
    sides.push({
      mb,
      label: [`semi-space ${mb} MB`, ...flags, ...(main ? [main] : [])].join(' '),
      // Flags after the image's own override them (V8 takes the last of a flag).
      arbor: await startArbor(db.url, flags, 1, {}, undefined, mb, main),
      runs: [],
    });
  const targets = [];
  for (const s of sides) {
    const sts = await prepareSts(c, s.arbor.url, scale);
    const token = await exchange(s.arbor.url, sts, sts.identities[0]!);
    await sts.issuer.stop();
    targets.push({
      url: `${s.arbor.url}/iam/v2beta1/groups?${anchor}=${orgUid(0)}&order_by=name&page_size=${PAGE_SIZE}`,
      headers: { authorization: `Bearer ${token}` },
    });
  }
  for (let i = 0; i < sides.length; i++)
    await measure(targets[i]!, scale.warmupSeconds, sides[i]!.arbor.pid, db.name);
  for (let r = 0; r < rounds; r++)
    for (let k = 0; k < sides.length; k++) {
      const i = (k + r) % sides.length;
      const x = await measure(targets[i]!, seconds, sides[i]!.arbor.pid, db.name);
      sides[i]!.runs.push(x);
      console.log(
        `round ${r + 1} ${sides[i]!.label}: ${x.rps.toFixed(0)}/s, Arbor ` +
          `${x.serverCpuMs.toFixed(3)} CPU ms/req, p50 ${x.p50.toFixed(2)} ms, RSS ` +
          `${x.rssPeakMB.toFixed(0)} MB, others' CPU ${(x.othersCpuShare * 100).toFixed(0)} %`,
      );
    }
  for (const s of sides)
    console.log(
      `${which} ${s.label}: median ${median(s.runs.map((x) => x.rps)).toFixed(0)}/s, ` +
        `${median(s.runs.map((x) => x.serverCpuMs)).toFixed(3)} CPU ms/req, RSS peak ` +
        `${Math.max(...s.runs.map((x) => x.rssPeakMB)).toFixed(0)} MB`,
    );
} finally {
  for (const s of sides) await s.arbor.stop();
  await c.end();
}
