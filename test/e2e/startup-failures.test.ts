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
