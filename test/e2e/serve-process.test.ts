import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { freePort, startArbor } from '../helpers/process.js';
import { makeClient } from '../helpers/server.js';

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

      // SIGTERM: in-flight work finishes, the process exits 0.
      const inflight = admin.get('/iam/v2beta1/groups');
      const exited = arbor.stop('SIGTERM');
      const res = await inflight.catch(() => undefined);
      if (res) t.is(res.status, 200);
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
