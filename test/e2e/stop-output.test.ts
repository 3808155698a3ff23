import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { LOCK_FILE } from '../../src/db/data-dir-lock.js';
import { freePort, startArbor } from '../helpers/process.js';

/**
 * A stop ends whatever happens to the server's output. A development run spawned by a Node
 * parent with piped stdio, sent SIGTERM by a parent that then exited at once, closed its
 * listener and never exited: pino's exit-time flush retried the broken pipe for ever, so
 * further signals were never heard and the embedded database's directory stayed locked.
 * `arbor serve | head -c 100` died at start-up on an unhandled EPIPE. And a second signal
 * of the other kind (SIGINT after SIGTERM) was ignored.
 */

const TOKEN = 'stop-output-admin-token-0123456789';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(ok: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (ok()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return ok();
}

test.serial(
  'stop: a parent with piped stdio sends SIGTERM and exits at once; the server still stops and frees its data directory',
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'arbor-stop-pipe-'));
    const port = await freePort();
    // The parent: spawns the server detached with pipes, waits for it to serve, signals it
    // and exits without reading another byte.
    const parentCode = `
      const { spawn } = require('node:child_process');
      const child = spawn(process.execPath, ['--import=tsx', 'src/main.ts', 'serve'], {
        stdio: 'pipe', detached: true, env: JSON.parse(process.env.CHILD_ENV),
      });
      process.stdout.write('pid ' + child.pid + '\\n');
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (/serving at/.test(out)) { child.kill('SIGTERM'); process.exit(0); }
      });
      child.stderr.on('data', () => {});
      child.on('exit', (c) => { process.stdout.write('early exit ' + c + '\\n' + out); process.exit(1); });
    `;
    const childEnv = {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: '',
      ARBOR_ADMIN_TOKEN: TOKEN,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      METRICS_PORT: '0',
      ARBOR_WORKERS: '1',
      ARBOR_SHUTDOWN_DELAY_SECONDS: '0',
      ARBOR_SHUTDOWN_TIMEOUT_SECONDS: '5',
      KUBERNETES_SERVICE_HOST: '',
    };
    const parent = spawn(process.execPath, ['-e', parentCode], {
      env: { ...process.env, CHILD_ENV: JSON.stringify(childEnv) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let said = '';
    parent.stdout.on('data', (d: Buffer) => (said += d.toString()));
    const parentCode_ = await new Promise<number | null>((r) => parent.once('exit', r));
    const pid = Number(/pid (\d+)/.exec(said)?.[1]);
    try {
      t.is(parentCode_, 0, said);
      t.true(Number.isInteger(pid), said);
      // Delay 0 + in-flight timeout 5 s + the stop's grace: well inside 30 s, or never.
      t.true(await until(() => !alive(pid), 30_000), 'the server is still running');
      t.false(existsSync(join(dataDir, LOCK_FILE)), 'the data directory is still locked');
      // The next start on the same directory is not refused.
      const next = startArbor(['serve'], { ...childEnv, PORT: String(await freePort()) });
      try {
        await next.waitForStatus('/readyz', 200, 120_000);
        t.is(await next.stop('SIGTERM'), 0);
      } finally {
        next.kill();
      }
    } finally {
      if (Number.isInteger(pid) && alive(pid)) process.kill(pid, 'SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

test.serial(
  'serve with its stdout and stderr closed by the reader (`| head -c 100`): it keeps serving and stops cleanly',
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'arbor-stop-head-'));
    // A development run: its sign-in note comes after the reader is gone.
    const arbor = startArbor(['serve'], {
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      ARBOR_ADMIN_TOKEN: '',
      NODE_ENV: '',
      KUBERNETES_SERVICE_HOST: '',
      LOG_FORMAT: 'json',
      ARBOR_WORKERS: '1',
      ARBOR_SHUTDOWN_DELAY_SECONDS: '0',
    });
    try {
      // Like head: read the first 100 bytes, then close the pipes.
      await arbor.waitForLog(/applying migrations/, 120_000);
      arbor.child.stdout!.destroy();
      arbor.child.stderr!.destroy();
      await arbor.waitForStatus('/readyz', 200, 120_000);
      // Past the banner and the sign-in note, written into the closed pipe: still alive.
      await new Promise((r) => setTimeout(r, 1_000));
      t.is(arbor.child.exitCode, null, 'the server died on a closed stdout');
      t.is((await fetch(`${arbor.url}/healthz`)).status, 200);
      const since = Date.now();
      t.is(await arbor.stop('SIGTERM'), 0);
      t.true(Date.now() - since < 20_000, `took ${Date.now() - since} ms`);
    } finally {
      arbor.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

test.serial('a second signal of the other kind exits at once too', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-stop-second-'));
  const arbor = startArbor(['serve'], {
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    ARBOR_ADMIN_TOKEN: TOKEN,
    LOG_FORMAT: 'json',
    ARBOR_WORKERS: '1',
    // A drain long enough that only the second signal can end it in time.
    ARBOR_SHUTDOWN_DELAY_SECONDS: '30',
  });
  try {
    await arbor.waitForStatus('/readyz', 200, 120_000);
    arbor.child.kill('SIGTERM');
    await arbor.waitForLog(/"msg":"shutting down/, 20_000);
    const since = Date.now();
    arbor.child.kill('SIGINT');
    t.is(await arbor.exited, 1);
    t.true(Date.now() - since < 5_000, `took ${Date.now() - since} ms`);
    t.regex(arbor.logs(), /second signal: exiting now/);
    t.false(existsSync(join(dataDir, LOCK_FILE)), 'the data directory is still locked');
  } finally {
    arbor.kill();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
