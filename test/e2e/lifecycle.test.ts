import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import test from 'ava';
import knexFactory from 'knex';
import { migrateLatest } from '../../src/db/migrate.js';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { freshDatabase } from '../helpers/db.js';
import { grpcCaller } from '../helpers/grpc-server.js';
import { postgresOnly } from '../helpers/need-tool.js';
import { freePort, startArbor } from '../helpers/process.js';

const TOKEN = 'e2e-admin-token-0123456789';

/** A plain gRPC unary ListGroups (the fast path's kind of call): its status code. */
async function listGroupsOverGrpc(url: string): Promise<number> {
  const caller = grpcCaller(new URL(url).host, TOKEN);
  try {
    return (await caller.call(GroupsService, 'ListGroups')).code;
  } finally {
    caller.close();
  }
}

// Holding a migration open needs a lock another session can take: PostgreSQL only.
postgresOnly(test.serial)(
  'serve: probes answer while migrations wait, and /readyz only once they are done',
  async (t) => {
    const db = await freshDatabase();
    await migrateLatest(db.knex);
    // Another session holds the migration lock table: the server's migrate() waits on it.
    const blocker = knexFactory({ client: 'pg', connection: db.url, pool: { min: 0, max: 1 } });
    const trx = await blocker.transaction();
    await trx.raw('LOCK TABLE arbor_migrations_lock IN ACCESS EXCLUSIVE MODE');
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'arbor-life-'));
    const arbor = startArbor(['serve'], {
      PORT: String(port),
      DATABASE_URL: db.url!,
      DATA_DIR: dataDir,
      ARBOR_ADMIN_TOKEN: TOKEN,
    });
    try {
      await arbor.waitForLog(/applying migrations before serving/);
      const health = await fetch(`${arbor.url}/healthz`);
      t.is(health.status, 200, 'liveness holds during migrations');
      t.is((await fetch(`${arbor.url}/startupz`)).status, 503);
      t.is((await fetch(`${arbor.url}/readyz`)).status, 503);
      const api = await fetch(`${arbor.url}/iam/v2beta1/groups`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      t.is(api.status, 503);
      t.is(((await api.json()) as { code: number }).code, 14);
      t.is(await listGroupsOverGrpc(arbor.url), grpc.status.UNAVAILABLE, 'gRPC waits too');
      await trx.rollback();
      await arbor.waitForStatus('/readyz', 200);
      t.is((await fetch(`${arbor.url}/startupz`)).status, 200);
      t.is(await listGroupsOverGrpc(arbor.url), grpc.status.OK);
    } finally {
      if (!trx.isCompleted()) await trx.rollback();
      await blocker.destroy();
      arbor.kill();
      await arbor.exited;
      await db.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

test.serial(
  'serve: on SIGTERM /readyz fails first, then an in-flight slow request still completes',
  async (t) => {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'arbor-life-'));
    const arbor = startArbor(['serve'], {
      PORT: String(port),
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      ARBOR_ADMIN_TOKEN: TOKEN,
      // Long enough that the poll below sees 503 however loaded the machine is.
      ARBOR_SHUTDOWN_DELAY_SECONDS: '8',
    });
    try {
      await arbor.waitForStatus('/readyz', 200);
      // A create whose body arrives slowly: half now, the rest after the listener closed.
      const body = JSON.stringify({ name: 'slow-one', description: 'x'.repeat(400) });
      let answered = false;
      const reply = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(`${arbor.url}/iam/v2beta1/groups`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${TOKEN}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        });
        req.on('response', (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => {
            answered = true;
            resolve({ status: res.statusCode ?? 0, body: text });
          });
        });
        req.on('error', reject);
        req.write(body.slice(0, 100));
        (t.context as { finish?: () => void }).finish = () => req.end(body.slice(100));
      });
      await new Promise((r) => setTimeout(r, 200));
      arbor.child.kill('SIGTERM');
      await arbor.waitForStatus('/readyz', 503, 30_000);
      t.false(answered, 'the slow request is still in flight');
      await arbor.waitForLog(/closing the listener/, 60_000);
      (t.context as { finish: () => void }).finish();
      const r = await reply;
      t.is(r.status, 200, r.body);
      t.is((JSON.parse(r.body) as { name: string }).name, 'slow-one');
      t.is(await arbor.exited, 0);
      t.regex(arbor.logs(), /"msg":"stopped"/);
    } finally {
      arbor.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);
