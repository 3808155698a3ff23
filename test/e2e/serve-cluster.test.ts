import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { freshDatabase } from '../helpers/db.js';
import { postgresOnly } from '../helpers/need-tool.js';
import { freePort, startArbor, type ArborProcess } from '../helpers/process.js';

const TOKEN = 'e2e-cluster-admin-token-0123456789';

/** One request on a fresh connection (no keep-alive), so the primary hands each to a worker in turn. */
function get(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        agent: false,
        headers: { authorization: `Bearer ${TOKEN}`, connection: 'close' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Poll until `ok()` holds; generous, because workers start slowly on a loaded machine. */
async function until(ok: () => boolean | Promise<boolean>, what: string, ms = 120_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

interface Started extends ArborProcess {
  cleanup: () => void;
}

async function startServe(env: Record<string, string>): Promise<Started> {
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-cluster-'));
  const arbor = startArbor(['serve'], {
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ARBOR_ADMIN_TOKEN: TOKEN,
    // No readiness delay before draining.
    ARBOR_SHUTDOWN_DELAY_SECONDS: '0',
    ...env,
  });
  return {
    ...arbor,
    cleanup: () => {
      arbor.kill();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const serving = (s: Started) =>
  s.lines().filter((l) => l.msg === 'worker serving') as Array<{ worker: number; pid: number }>;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

postgresOnly(test.serial)(
  'serve --workers 2: both workers answer, a killed one is replaced, SIGTERM drains and exits 0',
  async (t) => {
    const db = await freshDatabase();
    const s = await startServe({ DATABASE_URL: db.url!, ARBOR_WORKERS: '2' });
    try {
      await until(() => serving(s).length >= 2, 'two workers serving');
      t.is(s.lines().filter((l) => l.msg === 'migrations applied').length, 1, 'migrated once');

      // Connections go to the workers in turn: both answer.
      const answered = async () => {
        for (let i = 0; i < 8; i++) t.is(await get(s.port, '/iam/v2beta1/groups'), 200);
        const workers = new Set(
          s
            .lines()
            .filter((l) => l.msg === 'request' && l.path === '/iam/v2beta1/groups')
            .map((l) => l.worker),
        );
        return workers.size >= 2;
      };
      await until(answered, 'requests answered by two workers');

      // A worker killed outright is replaced, and the service keeps answering.
      const victim = serving(s)[0]!;
      process.kill(victim.pid, 'SIGKILL');
      await until(
        () => s.lines().some((l) => l.msg === 'worker exited unexpectedly; starting a replacement'),
        'the primary to notice',
      );
      await until(() => serving(s).length >= 3, 'a replacement worker');
      const replacement = serving(s)[2]!;
      t.not(replacement.pid, victim.pid);
      for (let i = 0; i < 4; i++) t.is(await get(s.port, '/readyz'), 200);

      // SIGTERM to the primary: the workers drain and stop, the primary exits 0.
      const workerPids = serving(s)
        .slice(1)
        .map((w) => w.pid);
      t.is(await s.stop('SIGTERM'), 0);
      t.is(s.lines().filter((l) => l.msg === 'worker stopped').length, 2);
      await until(() => workerPids.every((p) => !alive(p)), 'workers gone', 10_000);
    } finally {
      s.cleanup();
      await db.close();
    }
  },
);

test.serial(
  'serve: PGlite cannot be shared, so ARBOR_WORKERS=4 serves with one process',
  async (t) => {
    const s = await startServe({ DATABASE_URL: '', ARBOR_WORKERS: '4' });
    try {
      await until(async () => {
        try {
          return (await get(s.port, '/readyz')) === 200;
        } catch {
          return false;
        }
      }, 'ready');
      t.true(
        s.lines().some((l) => l.level === 40 && String(l.msg).includes('serving with 1 worker')),
      );
      t.is(serving(s).length, 0, 'no cluster workers');
      t.is(await s.stop('SIGTERM'), 0);
    } finally {
      s.cleanup();
    }
  },
);
