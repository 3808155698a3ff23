import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import knexFactory, { type Knex } from 'knex';
import { openDatabase } from '../../src/db/connect.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { needTool } from '../helpers/need-tool.js';
import { startArborProcess, type ArborProcess } from '../helpers/process.js';
import { ADMIN_TOKEN, makeClient, startServer, type TestServer } from '../helpers/server.js';
import {
  replicaUnavailable,
  startStreamingPair,
  type StreamingPair,
} from '../helpers/streaming-replica.js';

/**
 * A token revoked through one Arbor is refused by another within a second (docs/oauth.md,
 * "Revocation"), when that other one reads from a real streaming replica
 * (`DATABASE_READ_URL`, initdb + pg_basebackup -R) whose replay is paused: revocation is
 * authorization, so it is never read from a replica. Server 1 runs in this process on the
 * primary; server 2 is a separate `arbor serve` process on the primary with the replica,
 * sharing the signing keys. Server 2 has accepted the token (and keeps that answer) before
 * the revocation; the assertion polls it until it refuses, which must happen before one
 * second has passed since server 1 answered the revocation.
 */
const why = replicaUnavailable();
// In CI the binaries are installed: a missing one is a failure, not a skip.
const run = needTool(test.serial, 'PostgreSQL server binaries', why);

const ISSUER = 'http://arbor.replica-revocation.test';
/** The documented bound for another process (the change feed's delivery, else the 1 s cache). */
const BOUND_MS = 1_000;
const ROUNDS = 5;

let pair: StreamingPair;
let keys: string;
let one: TestServer;
let two: ArborProcess;
let standby: Knex;

test.before(async () => {
  if (why !== undefined) return;
  pair = await startStreamingPair();
  keys = mkdtempSync(join(tmpdir(), 'arbor-keys-'));
  const env = { ARBOR_SIGNING_KEYS_DIR: keys, ARBOR_ISSUER_URL: ISSUER };
  one = await startServer(env, {
    database: await openDatabase({ url: pair.primaryUrl, dataDir: '' }),
  });
  // Started after server 1 has migrated the database.
  two = await startArborProcess({
    ...env,
    DATABASE_URL: pair.primaryUrl,
    DATABASE_READ_URL: pair.standbyUrl,
    ARBOR_ADMIN_TOKEN: ADMIN_TOKEN,
  });
  standby = knexFactory({ client: 'pg', connection: pair.standbyUrl, pool: { min: 0, max: 1 } });
});

test.after.always(async () => {
  await standby?.raw('SELECT pg_wal_replay_resume()').catch(() => undefined);
  await standby?.destroy();
  two?.kill();
  await two?.exited;
  await one?.close();
  await pair?.stop();
  if (keys) rmSync(keys, { recursive: true, force: true });
});

async function pauseReplay(): Promise<void> {
  await standby.raw('SELECT pg_wal_replay_pause()');
  // Pausing takes effect at the next record; wait until the standby says it is paused.
  while ((await standby.raw('SELECT pg_get_wal_replay_pause_state() AS s')).rows[0].s !== 'paused')
    await new Promise((r) => setTimeout(r, 10));
}

/** Polls `get` until it answers `status` or `ms` pass; @returns the last status. */
async function pollUntil(get: () => Promise<number>, status: number, ms: number) {
  const deadline = Date.now() + ms;
  let last = await get();
  while (last !== status && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
    last = await get();
  }
  return last;
}

run(
  'revocation: a token revoked on server 1 is refused within a second by server 2, which reads from a paused replica',
  async (t) => {
    const org = await createGroup(one.admin, 'replica-revoke');
    const reader = await createRole(one.admin, org, 'reader', ['groups.list']);
    const who = await createIdentity(one.admin, org, 'ci');
    await createBinding(one.admin, org, who, reader);
    const onTwo = (token: string) => async () =>
      (await makeClient(two.url, token).get(`/iam/v2beta1/groups/${org}`)).status;
    // Server 2 sees the world once the replica has it (or its lag bound sends it to the primary).
    const first = (await one.arbor.tokens.sign(who, { iss: ISSUER, sub: 'sub-ci' })).token;
    t.is(await pollUntil(onTwo(first), 200, 30_000), 200, two.logs());
    await pauseReplay();
    const took: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const { token } = await one.arbor.tokens.sign(who, { iss: ISSUER, sub: 'sub-ci' });
      // Exchanged from it on server 2: revoking the parent revokes it too.
      const child = await fetch(`${two.url}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
          subject_token: token,
          subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
          scope: 'groups.list',
        }).toString(),
      });
      t.is(child.status, 200);
      const childToken = ((await child.json()) as { access_token: string }).access_token;
      // Server 2 accepts both, and now keeps the answer "not revoked" for each.
      t.is(await onTwo(token)(), 200);
      t.is(await onTwo(token)(), 200);
      t.is(await onTwo(childToken)(), 200);
      const revoked = await fetch(`${one.url}/oauth2/revoke`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ token }).toString(),
      });
      t.is(revoked.status, 200);
      const at = Date.now();
      // The replica still has no revocation: anything read there would let the token through.
      const jti = (
        JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as {
          jti: string;
        }
      ).jti;
      t.falsy(await standby('api_token_revocations').where({ jti }).first());
      const status = await pollUntil(onTwo(token), 401, BOUND_MS);
      const ms = Date.now() - at;
      t.is(status, 401, `still accepted ${ms} ms after the revocation`);
      t.true(ms < BOUND_MS, `refused only after ${ms} ms`);
      took.push(ms);
      t.is(await onTwo(childToken)(), 401, 'the token exchanged from it is refused too');
    }
    t.log(`refused on server 2 after ${took.join(', ')} ms (bound ${BOUND_MS} ms)`);
  },
);
