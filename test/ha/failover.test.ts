import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import pg from 'pg';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { startEventSink, until } from '../helpers/event-sink.js';
import { grpcCaller } from '../helpers/grpc-server.js';
import { havePgAutoFailover, startHaCluster, type HaCluster } from '../helpers/postgres-ha.js';
import { startArborProcess, type ArborProcess } from '../helpers/process.js';
import { makeClient, type Client } from '../helpers/server.js';
import { needTool } from '../helpers/need-tool.js';

/**
 * High availability: a real `arbor serve` over a pg_auto_failover formation (a primary and a
 * synchronous standby), reached through a multi-host DATABASE_URL. Several clients write
 * (REST and gRPC) while the primary's postgres and keeper are SIGKILLed and the monitor
 * promotes the standby. Every write answered 2xx must exist afterwards, every failure in
 * between must be UNAVAILABLE (HTTP 503 / gRPC 14), Arbor must write again within 10 s of
 * the promotion without a restart, and the event outbox must deliver every recorded event.
 */
const TOKEN = 'ha-failover-admin-token-0123456789';
const RECOVERY_BOUND_MS = 10_000;
// In CI pg_auto_failover is installed (.ci/run): missing, it is a failure, not a skip.
const haTest = needTool(
  test.serial,
  'pg_auto_failover',
  havePgAutoFailover() ? undefined : 'pg_autoctl is not installed',
);

interface Outcome {
  door: 'rest' | 'grpc';
  name: string;
  start: number;
  end: number;
  ok: boolean;
  /** The uid of the group made (ok only). */
  uid?: string;
  /** HTTP status (rest) or gRPC status code (grpc); -1 when the call itself failed. */
  status: number;
  /** The google.rpc code of a failure's body. */
  rpcCode?: number;
  detail?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Promotion {
  /** When the node first answered out of recovery. */
  promoted: number;
  /**
   * When it first took writes: pg_auto_failover keeps a promoted standby read-only
   * (default_transaction_read_only) until the old primary is known to be gone, for
   * primary_demote_timeout (the script sets 2 s; 30 s by default).
   */
  writable: number;
}

/** Poll node `url` until it is promoted and writable. */
async function watchPromotion(url: string, stop: () => boolean): Promise<Promotion | undefined> {
  let promoted: number | undefined;
  while (!stop()) {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    try {
      await c.connect();
      while (!stop()) {
        const r = await c.query<{ r: boolean; ro: string }>(
          "SELECT pg_is_in_recovery() AS r, current_setting('transaction_read_only') AS ro",
        );
        const now = Date.now();
        if (r.rows[0]?.r === false) promoted ??= now;
        if (promoted !== undefined && r.rows[0]?.ro === 'off') return { promoted, writable: now };
        await sleep(50);
      }
    } catch {
      await sleep(50);
    } finally {
      await c.end().catch(() => undefined);
    }
  }
  return undefined;
}

haTest(
  'failover: no acknowledged write lost, 503 while switching, serving again within 10 s',
  async (t) => {
    const cluster: HaCluster = await startHaCluster();
    const dataDir = mkdtempSync(join(tmpdir(), 'arbor-ha-'));
    const sink = await startEventSink('up');
    let arbor: ArborProcess | undefined;
    try {
      // The formation replicates synchronously: a commit is acknowledged once on both nodes.
      const primary = new pg.Client({ connectionString: cluster.nodeUrls[0] });
      await primary.connect();
      const sync = await primary.query<{ s: string }>(
        "SELECT current_setting('synchronous_standby_names') AS s",
      );
      await primary.end();
      t.regex(sync.rows[0]!.s, /^ANY 1 \(/, 'a synchronous standby is required');

      arbor = await startArborProcess({
        DATABASE_URL: cluster.url,
        DATA_DIR: dataDir,
        ARBOR_ADMIN_TOKEN: TOKEN,
        ARBOR_ALLOW_PRIVATE_SINKS: 'true',
        ARBOR_EVENTS_POLL_MS: '100',
        ARBOR_EVENTS_BACKOFF_MS: '100',
        ARBOR_EVENTS_BACKOFF_MAX_MS: '500',
        ARBOR_EVENTS_MAX_ATTEMPTS: '1000000',
        // A worker that died with its claim is replaced quickly (none should, but be sure).
        ARBOR_EVENTS_LEASE_MS: '3000',
      });
      const admin: Client = makeClient(arbor.url, TOKEN);
      const made = await admin.post('/iam/v2beta1/groups', { name: 'ha' });
      t.is(made.status, 200);
      const org = made.body.uid as string;
      const sub = await admin.post(`/events/v2beta1/subscriptions/${org}`, {
        name: 'hook',
        sink: sink.url,
      });
      t.is(sub.status, 200);
      const grpc = grpcCaller(`127.0.0.1:${arbor.port}`, TOKEN);

      const outcomes: Outcome[] = [];
      let stopping = false;
      let n = 0;
      const restWriter = async (w: number) => {
        while (!stopping) {
          const name = `r${w}-${n++}`;
          const start = Date.now();
          const o: Outcome = { door: 'rest', name, start, end: 0, ok: false, status: -1 };
          try {
            const r = await admin.post(`/iam/v2beta1/groups/${org}`, { name });
            o.status = r.status;
            o.ok = r.status === 200 && r.body?.name === name;
            if (o.ok) o.uid = r.body.uid as string;
            else {
              o.rpcCode = r.body?.code as number | undefined;
              o.detail = JSON.stringify(r.body).slice(0, 300);
            }
          } catch (e) {
            o.detail = String(e);
          }
          o.end = Date.now();
          outcomes.push(o);
          // Bounded load: a short pause between writes, a longer one after a failure.
          await sleep(o.ok ? 10 : 50);
        }
      };
      const grpcWriter = async () => {
        while (!stopping) {
          const name = `g-${n++}`;
          const start = Date.now();
          const r = await grpc.call(GroupsService, 'CreateGroup', { parent: org, group: { name } });
          const o: Outcome = {
            door: 'grpc',
            name,
            start,
            end: Date.now(),
            ok: r.ok && r.json?.name === name,
            status: r.code,
          };
          if (r.ok) o.uid = r.json.uid as string;
          else {
            o.rpcCode = r.status?.code as number | undefined;
            o.detail = `${r.code} ${r.message}`.slice(0, 300);
          }
          outcomes.push(o);
          await sleep(o.ok ? 10 : 50);
        }
      };
      // Reads of groups already acknowledged: each answers the group itself, or 503.
      const reads: Array<{ status: number; rpcCode?: number; right: boolean }> = [];
      const reader = async () => {
        while (!stopping) {
          const done = outcomes.filter((o) => o.ok);
          const pick = done[Math.floor(Math.random() * done.length)];
          if (pick) {
            const r = await admin.get(`/iam/v2beta1/groups/${pick.uid}`).catch(() => undefined);
            reads.push({
              status: r?.status ?? -1,
              rpcCode: r?.body?.code as number | undefined,
              right: r?.status === 200 && r.body?.name === pick.name && r.body?.uid === pick.uid,
            });
          }
          await sleep(20);
        }
      };
      const writers = [restWriter(0), restWriter(1), restWriter(2), grpcWriter(), reader()];

      await until('writes under way', () => outcomes.filter((o) => o.ok).length >= 40, 30_000);
      let promotion: Promotion | undefined;
      let watching = true;
      const watched = watchPromotion(cluster.nodeUrls[1], () => !watching).then(
        (p) => (promotion = p),
      );
      const killed = await cluster.killPrimary();
      // From here no write reaches node1: a later acknowledgement is the new primary's.
      const killedAt = Date.now();
      t.is(killed, 'node1');
      await until('the standby promoted', () => promotion !== undefined, 60_000).finally(() => {
        watching = false;
      });
      await watched;
      const promotedAt = promotion!.promoted;
      await until(
        'a write acknowledged after the promotion',
        () => outcomes.some((o) => o.ok && o.start >= promotedAt),
        30_000,
      );
      // Keep writing a little on the new primary, then stop the clients.
      await sleep(1_000);
      stopping = true;
      await Promise.all(writers);
      grpc.close();

      const firstOk = Math.min(
        ...outcomes.filter((o) => o.ok && o.start >= killedAt).map((o) => o.end),
      );
      const recoveryMs = firstOk - promotedAt;
      const failures = outcomes.filter((o) => !o.ok);
      const acked = outcomes.filter((o) => o.ok);
      t.log(
        `promotion ${promotedAt - killedAt} ms after the kill, writable ` +
          `${promotion!.writable - promotedAt} ms later; first write acknowledged ` +
          `${recoveryMs} ms after the promotion, ${firstOk - promotion!.writable} ms after ` +
          `it took writes (${firstOk - killedAt} ms after the kill); ` +
          `${acked.length} writes acknowledged, ${failures.length} failed ` +
          `(${failures.filter((o) => o.door === 'grpc').length} of them gRPC); ` +
          `${reads.length} reads, ${reads.filter((r) => !r.right).length} answered 503`,
      );
      t.true(
        recoveryMs <= RECOVERY_BOUND_MS,
        `Arbor wrote again ${recoveryMs} ms after the promotion`,
      );

      // Every failure was UNAVAILABLE: 503 with google.rpc code 14, or gRPC status 14.
      const wrong = failures.filter((o) =>
        o.door === 'rest'
          ? !(o.status === 503 && o.rpcCode === 14)
          : !(o.status === 14 && o.rpcCode === 14),
      );
      t.deepEqual(wrong, [], 'every failure during the switch is UNAVAILABLE');
      t.deepEqual(
        reads.filter((r) => !(r.right || (r.status === 503 && r.rpcCode === 14))),
        [],
        'every read answers the acknowledged group, or UNAVAILABLE',
      );
      t.true(reads.some((r) => r.right));
      // And only around the switch: nothing failed long before the kill.
      t.deepEqual(
        failures.filter((o) => o.end < killedAt - 1_000),
        [],
      );

      // Zero acknowledged writes lost: each one is there on the new primary.
      const after = new pg.Client({ connectionString: cluster.nodeUrls[1] });
      await after.connect();
      const rows = await after.query<{ uid: string; name: string }>(
        'SELECT uid, name FROM groups WHERE parent_uid = $1',
        [org],
      );
      await after.end();
      const present = new Map(rows.rows.map((r) => [r.uid, r.name]));
      const lost = acked.filter((o) => present.get(o.uid!) !== o.name);
      t.deepEqual(lost, [], 'every write answered 2xx is present after the failover');
      // And through Arbor (its pool on the new primary), for one of the last ones.
      const last = acked.at(-1)!;
      t.is((await admin.get(`/iam/v2beta1/groups/${last.uid}`)).status, 200);

      // The outbox carried on: every recorded event below the org reaches the sink, and
      // every acknowledged create was recorded (its audit record commits with it).
      const recorded = await auditBelow(admin, org);
      const recordedUids = new Set(recorded.map((e) => e.resourceUid));
      t.deepEqual(
        acked.filter((o) => !recordedUids.has(o.uid!)),
        [],
        'every acknowledged write has its audit record',
      );
      await until(
        'every recorded event delivered',
        () => {
          const got = new Set(sink.accepted().map((r) => r.body.id as string));
          return recorded.every((e) => got.has(e.id));
        },
        60_000,
      );
      const received = sink.accepted().map((r) => r.body.id as string);
      t.log(
        `${recorded.length} events recorded, all delivered; ` +
          `${received.length - new Set(received).size} delivered more than once`,
      );
    } finally {
      await arbor?.stop();
      await sink.close();
      await cluster.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);

/** The audit records below `org`: what the sink must receive. */
async function auditBelow(
  c: Client,
  org: string,
): Promise<Array<{ id: string; resourceUid: string }>> {
  const ids: Array<{ id: string; resourceUid: string }> = [];
  let token = '';
  for (;;) {
    const r = await c.get(
      `/audit/v2beta1/events?uidp.descendants_of=${org}&page_size=200${token ? `&page_token=${token}` : ''}`,
    );
    if (r.status !== 200) throw new Error(`audit list: ${r.status} ${JSON.stringify(r.body)}`);
    ids.push(...(r.body.events as Array<{ id: string; resourceUid: string }>));
    if (!r.body.nextPageToken) return ids;
    token = encodeURIComponent(r.body.nextPageToken as string);
  }
}
