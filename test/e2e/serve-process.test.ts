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
