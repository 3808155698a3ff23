import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { freePort, startArbor } from '../helpers/process.js';
import { makeClient } from '../helpers/server.js';

/**
 * A POST sent with `Expect: 100-continue`: `asked` resolves when the server has read its
 * head and asks for the body, which goes out only on `send()`; `reply` is the answer.
 */
function postWhenAsked(base: string, token: string, path: string, body: unknown) {
  const text = JSON.stringify(body);
  let heard!: () => void;
  const asked = new Promise<void>((resolve) => (heard = resolve));
  let proceed!: () => void;
  const go = new Promise<void>((r) => (proceed = r));
  const reply = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(`${base}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
        expect: '100-continue',
      },
    });
    req.on('continue', () => {
      heard();
      void go.then(() => req.end(text));
    });
    req.on('response', (res) => {
      let out = '';
      res.on('data', (d: Buffer) => (out += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: out }));
    });
    req.on('error', reject);
    req.flushHeaders();
  });
  return { asked, send: () => proceed(), reply };
}

test.serial(
  'serve: a fresh data dir with nothing configured serves the API on embedded PGlite',
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'arbor-e2e-'));
    const token = 'e2e-admin-token-0123456789';
    const arbor = startArbor(['serve'], {
      PORT: String(await freePort()),
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      ARBOR_ADMIN_TOKEN: token,
      // The listener closes at once on SIGTERM: what is served after is in-flight work.
      ARBOR_SHUTDOWN_DELAY_SECONDS: '0',
    });
    try {
      await arbor.waitForStatus('/readyz', 200, 90_000);
      t.true(existsSync(join(dataDir, 'pglite')), 'the embedded database lives in DATA_DIR');
      const admin = makeClient(arbor.url, token);
      const created = await admin.post('/iam/v2beta1/groups', { name: 'from-e2e' });
      t.is(created.status, 200);

      // Structured JSON logs with a request id per request.
      const findLine = () =>
        arbor
          .logs()
          .split('\n')
          .find((l) => l.includes('"msg":"request"') && l.includes('/iam/v2beta1/groups'));
      for (let i = 0; i < 40 && !findLine(); i++) await new Promise((r) => setTimeout(r, 50));
      const line = findLine();
      t.truthy(line);
      t.truthy(JSON.parse(line!).requestId);

      // SIGTERM: in-flight work finishes, the process exits 0. The create is in flight
      // before the signal (the server has its head: it asked for the body with 100
      // Continue) and gets its body only once the listener is closing; dropped, it fails.
      const inflight = postWhenAsked(arbor.url, token, '/iam/v2beta1/groups', {
        name: 'in-flight',
      });
      await inflight.asked;
      const exited = arbor.stop('SIGTERM');
      await arbor.waitForLog(/closing the listener: finishing in-flight requests/);
      inflight.send();
      const res = await inflight.reply;
      t.is(res.status, 200, res.body);
      t.is(JSON.parse(res.body).name, 'in-flight');
      t.is(await exited, 0);
      t.regex(arbor.logs(), /"msg":"stopped"/);
    } finally {
      arbor.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

test.serial(
  'serve: a bad configuration fails fast with a message naming the variable',
  async (t) => {
    const arbor = startArbor(['serve'], { PORT: 'eighty' });
    t.is(await arbor.exited, 1);
    t.regex(arbor.logs(), /PORT must be a port number/);
  },
);

/** A development-like server on embedded PGlite (no admin token: the sign-in token serves). */
async function plainServer(env: Record<string, string>) {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-e2e-signals-'));
  const arbor = startArbor(['serve'], {
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    ARBOR_ADMIN_TOKEN: '',
    ARBOR_SHUTDOWN_DELAY_SECONDS: '',
    KUBERNETES_SERVICE_HOST: '',
    LOG_FORMAT: 'json',
    ARBOR_WORKERS: '1',
    ...env,
  });
  await arbor.waitForStatus('/readyz', 200, 120_000);
  return { arbor, done: () => rmSync(dataDir, { recursive: true, force: true }) };
}

const shuttingDown = (arbor: ReturnType<typeof startArbor>) =>
  arbor.lines().find((l) => String(l.msg).startsWith('shutting down'));

test.serial(
  'serve: Ctrl-C outside Kubernetes stops at once (no endpoint-drain delay)',
  async (t) => {
    const { arbor, done } = await plainServer({});
    try {
      const since = Date.now();
      t.is(await arbor.stop('SIGINT'), 0);
      t.is(shuttingDown(arbor)?.delayMs, 0);
      // The drain delay was 5 s before; stopping the embedded database is the rest.
      t.true(Date.now() - since < 5_000, `took ${Date.now() - since} ms`);
      t.regex(arbor.logs(), /"msg":"stopped"/);
    } finally {
      arbor.kill();
      done();
    }
  },
);

test.serial(
  'serve: in a pod the drain delay applies, and a second signal exits at once',
  async (t) => {
    const { arbor, done } = await plainServer({ KUBERNETES_SERVICE_HOST: '10.0.0.1' });
    try {
      arbor.child.kill('SIGTERM');
      await arbor.waitForLog(/"msg":"shutting down/, 10_000);
      t.is(shuttingDown(arbor)?.delayMs, 5_000);
      const since = Date.now();
      arbor.child.kill('SIGTERM');
      t.is(await arbor.exited, 1);
      t.true(Date.now() - since < 4_000, `took ${Date.now() - since} ms`);
      t.regex(arbor.logs(), /second signal: exiting now/);
      t.notRegex(arbor.logs(), /"msg":"stopped"/);
    } finally {
      arbor.kill();
      done();
    }
  },
);

test.serial('serve: on a terminal the logs are lines for a person, with a banner', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-e2e-tty-'));
  const port = await freePort();
  // `script` gives the server a terminal for stdout, as a person's shell would.
  const command = `${JSON.stringify(process.execPath)} --import=tsx src/main.ts serve`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      ARBOR_ADMIN_TOKEN: 'tty-admin-token-0123456789',
      LOG_FORMAT: '',
      LOG_LEVEL: 'info',
      METRICS_PORT: '0',
      ARBOR_WORKERS: '1',
      ARBOR_SHUTDOWN_DELAY_SECONDS: '0',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise((r) => child.once('exit', r));
  try {
    const deadline = Date.now() + 120_000;
    while (!/serving at/.test(out) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    // eslint-disable-next-line no-control-regex
    const plain = out.replace(/\x1b\[[0-9;]*m/g, '');
    t.regex(plain, /INFO.*: Arbor \d+\.\d+\.\d+ serving at http:\/\/127\.0\.0\.1:\d+/);
    t.regex(plain, /database: "?pglite/);
    t.false(
      plain.split(/\r?\n/).some((l) => l.startsWith('{"level"')),
      'no JSON lines on a terminal',
    );
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
});
