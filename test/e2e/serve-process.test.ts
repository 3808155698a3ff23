import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import test from 'ava';
import { makeClient } from '../helpers/server.js';

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function waitReady(url: string, child: ChildProcess, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('server did not become ready');
}

test.serial(
  'serve: a fresh data dir with nothing configured serves the API on embedded PGlite',
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'arbor-e2e-'));
    const port = await freePort();
    const token = 'e2e-admin-token-0123456789';
    const child = spawn(process.execPath, ['--import=tsx', 'src/main.ts', 'serve'], {
      env: {
        ...process.env,
        PORT: String(port),
        DATA_DIR: dataDir,
        DATABASE_URL: '',
        ARBOR_ADMIN_TOKEN: token,
        LOG_LEVEL: 'info',
        METRICS_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let logs = '';
    child.stdout!.on('data', (d: Buffer) => (logs += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (logs += d.toString()));
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitReady(url, child);
      t.true(existsSync(join(dataDir, 'pglite')), 'the embedded database lives in DATA_DIR');
      const admin = makeClient(url, token);
      const created = await admin.post('/iam/v2beta1/groups', { name: 'from-e2e' });
      t.is(created.status, 200);

      // Structured JSON logs with a request id per request.
      const findLine = () =>
        logs
          .split('\n')
          .find((l) => l.includes('"msg":"request"') && l.includes('/iam/v2beta1/groups'));
      for (let i = 0; i < 40 && !findLine(); i++) await new Promise((r) => setTimeout(r, 50));
      const line = findLine();
      t.truthy(line);
      t.truthy(JSON.parse(line!).requestId);

      // SIGTERM: in-flight work finishes, the process exits 0.
      const inflight = admin.get('/iam/v2beta1/groups');
      child.kill('SIGTERM');
      const res = await inflight.catch(() => undefined);
      if (res) t.is(res.status, 200);
      const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
      t.is(code, 0);
      t.regex(logs, /"msg":"stopped"/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

test.serial(
  'serve: a bad configuration fails fast with a message naming the variable',
  async (t) => {
    const child = spawn(process.execPath, ['--import=tsx', 'src/main.ts', 'serve'], {
      env: { ...process.env, PORT: 'eighty' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    t.is(code, 1);
    t.regex(err, /PORT must be a port number/);
  },
);
