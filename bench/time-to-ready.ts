/**
 * `npx tsx bench/time-to-ready.ts [--runs=7] [--only=pglite,postgres] [--json=FILE]`: how long
 * `arbor serve` takes from spawn to its first `/readyz` 200, as Kubernetes sees a new pod
 * (the start-fast target). Each run starts the built server (`node dist/src/main.js serve`,
 * the image's command and flags) on a fresh database: a new, empty PGlite data directory, or
 * a PostgreSQL database created empty for the run (BENCH_PG_ADMIN_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres) and dropped after. The runs alternate between
 * the two. Reported per database: median and p90 of the wall time, and of the server's own
 * CPU time (user + system, from /proc) up to that moment, which a loud machine inflates less.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { procCpuMs } from './load.js';
import { ROOT, buildOnce, freePort, imageNodeFlags } from './procs.js';
import { ADMIN_TOKEN } from './scale.js';

const args = process.argv.slice(2);
const arg = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const runs = Number(arg('runs') ?? '7');
const only = (arg('only') ?? 'pglite,postgres').split(',') as Array<'pglite' | 'postgres'>;
const ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Run {
  wallMs: number;
  cpuMs: number;
}

/** One start: spawn, poll /readyz every 5 ms, read the CPU at the first 200, stop. */
async function once(env: Record<string, string>): Promise<Run> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const child = spawn(process.execPath, [...imageNodeFlags(), 'dist/src/main.js', 'serve'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      HOST: '127.0.0.1',
      PORT: String(port),
      ARBOR_ISSUER_URL: url,
      ARBOR_ADMIN_TOKEN: ADMIN_TOKEN,
      ARBOR_SHUTDOWN_DELAY_SECONDS: '0',
      ARBOR_WORKERS: '1',
      LOG_LEVEL: 'warn',
      METRICS_PORT: '0',
      NODE_ENV: 'production',
      ...env,
    },
  });
  let err = '';
  child.stderr!.on('data', (b: Buffer) => (err = (err + b.toString()).slice(-4000)));
  const exited = new Promise((ok) => child.once('exit', ok));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`arbor exited (${child.exitCode}): ${err}`);
      const ready = await fetch(`${url}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) {
        const wallMs = performance.now() - t0;
        return { wallMs, cpuMs: procCpuMs(child.pid!) };
      }
      if (performance.now() - t0 > 120_000) throw new Error(`not ready in 120 s: ${err}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

async function pglite(): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-ttr-'));
  try {
    return await once({ DATA_DIR: dir });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let n = 0;
async function postgres(): Promise<Run> {
  const name = `arbor_ttr_${process.pid}_${n++}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  const dir = mkdtempSync(join(tmpdir(), 'arbor-ttr-'));
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const u = new URL(ADMIN_URL);
    u.pathname = `/${name}`;
    return await once({ DATABASE_URL: u.toString(), DATA_DIR: dir });
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};

async function main() {
  buildOnce();
  const kinds = { pglite, postgres };
  const results: Record<string, Run[]> = {};
  // Alternate the databases run by run, so both see the same drift in the machine's load.
  for (let r = 1; r <= runs; r++) {
    for (const k of only) {
      const x = await kinds[k]();
      (results[k] ??= []).push(x);
      console.log(
        `run ${r} ${k}: ready in ${x.wallMs.toFixed(0)} ms, ${x.cpuMs.toFixed(0)} ms CPU`,
      );
    }
  }
  console.log(
    `\n| database (fresh) | runs | ready p50 ms | ready p90 ms | CPU p50 ms | CPU p90 ms |`,
  );
  console.log(`|---|--:|--:|--:|--:|--:|`);
  for (const [k, xs] of Object.entries(results)) {
    const w = xs.map((x) => x.wallMs);
    const c = xs.map((x) => x.cpuMs);
    console.log(
      `| ${k} | ${xs.length} | ${quantile(w, 0.5).toFixed(0)} | ${quantile(w, 0.9).toFixed(0)} | ` +
        `${quantile(c, 0.5).toFixed(0)} | ${quantile(c, 0.9).toFixed(0)} |`,
    );
  }
  const json = arg('json');
  if (json) writeFileSync(json, JSON.stringify({ at: new Date().toISOString(), results }, null, 2));
}

await main();
