import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { freePort, startArbor } from '../helpers/process.js';

/**
 * An operator's mistake at start-up (a port taken, a database out of reach) stops `arbor
 * serve` with one line that names the variable to change: exit 1, no stack trace, no
 * password, and never after claiming to listen.
 */
const STACK = /^\s+at /m;

function hold(port: number): Promise<net.Server> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(port, '0.0.0.0', () => resolve(s));
  });
}

async function serve(
  env: Record<string, string>,
  command = 'serve',
): Promise<{ code: number | null; logs: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-startup-'));
  try {
    const p = startArbor([command], { DATA_DIR: dataDir, HOST: '0.0.0.0', ...env });
    const code = await p.exited;
    return { code, logs: p.logs() };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

test('startup: a PORT in use is named, before "listening", without a stack', async (t) => {
  const port = await freePort();
  const held = await hold(port);
  try {
    const r = await serve({ PORT: String(port), METRICS_PORT: '0', DATABASE_URL: '' });
    t.is(r.code, 1, r.logs);
    t.regex(r.logs, new RegExp(`arbor: PORT=${port} \\(on 0\\.0\\.0\\.0\\) is in use`));
    t.notRegex(r.logs, /listening/);
    t.notRegex(r.logs, STACK);
  } finally {
    held.close();
  }
});

test('startup: a METRICS_PORT in use is named, before "listening", without a stack', async (t) => {
  const [port, metrics] = [await freePort(), await freePort()];
  const held = await hold(metrics);
  try {
    for (const workers of ['1', '2']) {
      // Two workers need PostgreSQL; the ports are checked before the database is.
      const db = workers === '1' ? '' : `postgres://nobody@127.0.0.1:${await freePort()}/x`;
      const r = await serve({
        PORT: String(port),
        METRICS_PORT: String(metrics),
        ARBOR_WORKERS: workers,
        DATABASE_URL: db,
      });
      t.is(r.code, 1, r.logs);
      t.regex(
        r.logs,
        new RegExp(`arbor: METRICS_PORT=${metrics} \\(on 0\\.0\\.0\\.0\\) is in use`),
      );
      t.notRegex(r.logs, /listening/);
      t.notRegex(r.logs, STACK);
    }
  } finally {
    held.close();
  }
});

test('startup: an unreachable database is named without its password or a stack', async (t) => {
  const dead = await freePort();
  for (const workers of ['1', '2']) {
    const r = await serve({
      PORT: String(await freePort()),
      METRICS_PORT: '0',
      ARBOR_WORKERS: workers,
      DATABASE_URL: `postgres://bob:s3cret-pw@127.0.0.1:${dead}/nodb?password=s3cret-pw`,
    });
    t.is(r.code, 1, r.logs);
    t.true(
      r.logs.includes(
        `arbor: cannot use the database at DATABASE_URL=postgres://bob:***@127.0.0.1:${dead}/nodb: connect ECONNREFUSED`,
      ),
      r.logs,
    );
    t.false(r.logs.includes('s3cret-pw'), 'the password is never printed');
    t.notRegex(r.logs, STACK, `${workers} worker(s)`);
  }
});

test('startup: a reconciler ARBOR_RECONCILER_HEALTH_PORT in use is named without a stack', async (t) => {
  const port = await freePort();
  const held = await hold(port);
  try {
    // The probe listener opens first, before the database and the cluster are touched.
    const r = await serve(
      { ARBOR_RECONCILER_HEALTH_PORT: String(port), METRICS_PORT: '0', DATABASE_URL: '' },
      'reconcile',
    );
    t.is(r.code, 1, r.logs);
    t.regex(
      r.logs,
      new RegExp(`arbor: ARBOR_RECONCILER_HEALTH_PORT=${port} \\(on 0\\.0\\.0\\.0\\) is in use`),
    );
    t.notRegex(r.logs, STACK);
  } finally {
    held.close();
  }
});

test('startup: a DATA_DIR that cannot be made or written is one line naming it, at once', async (t) => {
  // Under /proc Node's recursive mkdir never returned (a silent hang);
  // under /sys the raw EPERM did not say which variable. Also with workers (the primary).
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['/proc/nope', { DATABASE_URL: '' }, /it cannot be created \(ENOENT\)/],
    ['/sys/nope', { DATABASE_URL: '' }, /it cannot be created \(EPERM\)/],
    ['/proc/nope/deeper', { DATABASE_URL: '' }, /it cannot be created/],
    [
      '/proc/nope',
      { ARBOR_WORKERS: '2', DATABASE_URL: `postgres://nobody@127.0.0.1:${await freePort()}/x` },
      /it cannot be created \(ENOENT\)/,
    ],
  ];
  for (const [dir, env, why] of cases) {
    const started = Date.now();
    const p = startArbor(['serve'], {
      PORT: String(await freePort()),
      METRICS_PORT: '0',
      ...env,
      DATA_DIR: dir,
    });
    // A bound well past a start on a busy machine: only a hang reaches it.
    const code = await Promise.race([
      p.exited,
      new Promise<'hung'>((r) => setTimeout(() => r('hung'), 45_000).unref()),
    ]);
    p.kill();
    const took = Date.now() - started;
    t.is(code, 1, `${dir}: ${String(code)} after ${took} ms\n${p.logs()}`);
    const lines = p.logs().trim().split('\n');
    t.is(lines.length, 1, `${dir}: ${p.logs()}`);
    t.regex(lines[0] ?? '', new RegExp(`^arbor: DATA_DIR=${dir} cannot be used: `));
    t.regex(lines[0] ?? '', why);
    t.notRegex(p.logs(), STACK);
    t.log(
      `DATA_DIR=${dir}${env.ARBOR_WORKERS ? ' (2 workers)' : ''}: exit ${code} after ${took} ms`,
    );
  }
});
