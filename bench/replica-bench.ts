/**
 * Reads per second against the primary alone and with one streaming replica added
 * (DATABASE_READ_URL), in the same sitting:
 *
 *   npx tsx bench/replica-bench.ts [--reads=20000] [--workers=2] [--in-flight=32] [--smoke]
 *
 * Starts its own PostgreSQL 15 primary and standby (initdb + pg_basebackup -R, as
 * test/ha/replica-consistency.test.ts does) and two `arbor serve` processes on them: one
 * with DATABASE_URL only, one with DATABASE_READ_URL naming the standby too. Both serve
 * the same Gets of seeded groups (the REST fast read path), `--in-flight` at a time, runs
 * alternating between the two so they share the machine's drift; medians of 3 runs. The
 * standby's own transaction count (pg_stat_database) shows how many reads it answered.
 *
 * Prints Markdown. Figures are only meaningful on a quiet machine (see BENCHMARKS.md).
 */
import knexFactory from 'knex';
import { startArborProcess, type ArborProcess } from '../test/helpers/process.js';
import { makeClient } from '../test/helpers/server.js';
import { createGroup } from '../test/helpers/fixtures.js';
import { replicaUnavailable, startStreamingPair } from '../test/helpers/streaming-replica.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const SMOKE = args.includes('--smoke');
const num = (name: string, fallback: number) =>
  Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const READS = num('reads', SMOKE ? 300 : 20_000);
const WORKERS = num('workers', 2);
const IN_FLIGHT = num('in-flight', 32);
const RUNS = SMOKE ? 1 : 3;
const GROUPS = 100;
const TOKEN = 'bench-admin-token-0123456789abcdef';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** `n` Gets of random seeded groups, IN_FLIGHT at a time. @returns reads per second. */
async function readRun(url: string, uids: string[], n: number): Promise<number> {
  const c = makeClient(url, TOKEN);
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < n) {
      next++;
      const uid = uids[Math.floor(Math.random() * uids.length)]!;
      const res = await c.get(`/iam/v2beta1/groups/${uid}`);
      if (res.status !== 200) throw new Error(`read: ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return n / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  const why = replicaUnavailable();
  if (why) throw new Error(`cannot start a streaming replica: ${why}`);
  const pair = await startStreamingPair();
  const dirs = [
    mkdtempSync(join(tmpdir(), 'arbor-bench-')),
    mkdtempSync(join(tmpdir(), 'arbor-bench-')),
  ];
  const procs: ArborProcess[] = [];
  const standby = knexFactory({
    client: 'pg',
    connection: pair.standbyUrl,
    pool: { min: 0, max: 1 },
  });
  try {
    const common = {
      ARBOR_ADMIN_TOKEN: TOKEN,
      ARBOR_WORKERS: String(WORKERS),
      DATABASE_URL: pair.primaryUrl,
    };
    // One after the other: the first migrates, the second finds it done.
    const alone = await startArborProcess({ ...common, DATA_DIR: dirs[0]! });
    procs.push(alone);
    const replicated = await startArborProcess({
      ...common,
      DATA_DIR: dirs[1]!,
      DATABASE_READ_URL: pair.standbyUrl,
    });
    procs.push(replicated);
    const admin = makeClient(alone.url, TOKEN);
    const org = await createGroup(admin, 'bench-replica');
    const uids: string[] = [];
    for (let i = 0; i < GROUPS; i++) uids.push(await createGroup(admin, `g${i}`, org));
    // Warm both (connections, prepared statements, JIT) before timing.
    for (const p of procs) await readRun(p.url, uids, Math.min(READS, 500));

    const standbyXacts = async () =>
      Number(
        (
          await standby.raw(
            `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`,
          )
        ).rows[0].xact_commit,
      );
    const results: Record<'alone' | 'replica', number[]> = { alone: [], replica: [] };
    let onStandby = 0;
    for (let r = 0; r < RUNS; r++) {
      results.alone.push(await readRun(alone.url, uids, READS));
      const before = await standbyXacts();
      results.replica.push(await readRun(replicated.url, uids, READS));
      onStandby += (await standbyXacts()) - before;
    }
    const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
    console.log(`## Reads per second: primary alone vs one replica added

- Command: \`npx tsx bench/replica-bench.ts --reads=${READS} --workers=${WORKERS} --in-flight=${IN_FLIGHT}\`
- ${READS} Gets per run (REST fast read path, admin token), ${IN_FLIGHT} in flight, medians of ${RUNS} runs; \`arbor serve\` with ${WORKERS} workers each.

| setup | reads/s (median) | runs |
| --- | ---: | --- |
| primary alone | ${fmt(median(results.alone))} | ${results.alone.map(fmt).join(', ')} |
| primary + 1 replica | ${fmt(median(results.replica))} | ${results.replica.map(fmt).join(', ')} |

Standby transactions during the replica runs: ${onStandby} of ${READS * RUNS} reads (each Get is one statement; the count includes the replay-position checks, and grant lookups stay on the primary).`);
  } finally {
    for (const p of procs) await p.stop().catch(() => undefined);
    await standby.destroy();
    await pair.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

await main();
