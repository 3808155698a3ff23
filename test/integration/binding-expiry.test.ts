import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createIdentity, createRole, fields } from '../helpers/iam-fixtures.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

let db: TestDatabase;
/** Two Arbor instances over one database: two workers, each with its own grant cache. */
let a: TestServer;
let b: TestServer;
let org: string;
let reader: string;
const B = '/iam/v2beta1/roleBindings';

test.before(async () => {
  db = await freshDatabase();
  // Expired bindings stay listed for an hour before worker a's sweeper deletes them.
  a = await startServer({ ARBOR_BINDING_RETENTION_SECONDS: '3600' }, { database: db });
  b = await startServer({}, { database: { ...db, close: () => Promise.resolve() } });
  org = await createGroup(a.admin, 'expiry-org');
  reader = await createRole(a.admin, org, 'reader', ['groups.list', 'repo.list']);
});
test.after.always(async () => {
  await b?.close();
  await a?.close();
});

async function tokenFor(s: TestServer, uid: string, name: string): Promise<string> {
  return (await s.arbor.tokens.sign(uid, { iss: ISSUER, sub: `sub-${name}` })).token;
}

/** Resolves once the wall clock has reached `at` (a condition, not a guess at a delay). */
async function until(at: number): Promise<void> {
  while (Date.now() < at) await new Promise((r) => setTimeout(r, Math.min(20, at - Date.now())));
}

test.serial(
  'expireTime: validated, in the future at create, and shown on the binding',
  async (t) => {
    const id = await createIdentity(a.admin, org, 'validated');
    const past = await a.admin.post(`${B}/${org}`, {
      identityUid: id,
      roleUid: reader,
      expireTime: new Date(Date.now() - 1000).toISOString(),
    });
    t.is(past.status, 400);
    t.deepEqual(fields(past.body), ['expireTime']);
    const garbage = await a.admin.post(`${B}/${org}`, {
      identityUid: id,
      roleUid: reader,
      expireTime: 'tomorrow',
    });
    t.is(garbage.status, 400);
    t.deepEqual(fields(garbage.body), ['expireTime']);
    const at = new Date(Date.now() + 3_600_000);
    const ok = await a.admin.post(`${B}/${org}`, {
      identityUid: id,
      roleUid: reader,
      expireTime: at.toISOString(),
    });
    t.is(ok.status, 200);
    t.is(new Date(ok.body.expireTime).getTime(), at.getTime());
    t.false(ok.body.expired);
    // Set once, at create: an update cannot move it.
    const moved = await a.admin.patch(`${B}/${ok.body.uid}?updateMask=expireTime`, {
      expireTime: new Date(Date.now() + 7_200_000).toISOString(),
    });
    t.is(moved.status, 400);
  },
);

test.serial(
  'expiry: from expireTime on, no worker grants, even from a warm grant cache',
  async (t) => {
    const id = await createIdentity(a.admin, org, 'short-lived');
    const expireAt = Date.now() + 1_500;
    const created = await a.admin.post(`${B}/${org}`, {
      identityUid: id,
      roleUid: reader,
      expireTime: new Date(expireAt).toISOString(),
    });
    t.is(created.status, 200);
    const onA = a.client(await tokenFor(a, id, 'short-lived'));
    const onB = b.client(await tokenFor(b, id, 'short-lived'));
    // Warm both workers' grant caches shortly before the expiry: late enough that the
    // remembered grants (kept for one second) are still held at expireAt, early enough that
    // a loaded machine answers both warm-up reads before it.
    await until(expireAt - 600);
    t.is((await onA.get(`/iam/v2beta1/groups/${org}`)).status, 200);
    t.is((await onB.get(`/iam/v2beta1/groups/${org}`)).status, 200);
    await until(expireAt);
    // Well inside the caches' one second: the remembered grant carries its expiry.
    t.is((await onB.get(`/iam/v2beta1/groups/${org}`)).status, 404);
    t.is((await onA.get(`/iam/v2beta1/groups/${org}`)).status, 404);
    const check = await b.admin.post('/iam/v2beta1/access:check', {
      identityUid: id,
      capability: 'groups.list',
      groupUid: org,
    });
    t.false(check.body.allowed);
    // Listed as expired until swept.
    const listed = await a.admin.get(`${B}?identity=${id}`);
    t.is(listed.body.roleBindings.length, 1);
    t.true(listed.body.roleBindings[0].expired);
  },
);

test.serial(
  'sweeper: deletes bindings past expiry and retention, each audited and evented',
  async (t) => {
    const oldId = await createIdentity(a.admin, org, 'long-gone');
    const recentId = await createIdentity(a.admin, org, 'just-gone');
    const make = async (identityUid: string) =>
      (
        await a.admin.post(`${B}/${org}`, {
          identityUid,
          roleUid: reader,
          expireTime: new Date(Date.now() + 3_600_000).toISOString(),
        })
      ).body.uid as string;
    const old = await make(oldId);
    const recent = await make(recentId);
    // Move the expiries into the past, as time would.
    await db
      .knex('role_bindings')
      .where({ uid: old })
      .update({
        expire_time: new Date(Date.now() - 2 * 3_600_000),
      });
    await db
      .knex('role_bindings')
      .where({ uid: recent })
      .update({
        expire_time: new Date(Date.now() - 60_000),
      });
    const sweeper = a.arbor.bindingSweeper;
    const swept = await sweeper.sweep();
    t.is(swept, 1);
    t.is((await a.admin.get(`${B}/${old}`)).status, 404);
    const kept = await a.admin.get(`${B}/${recent}`);
    t.is(kept.status, 200);
    t.true(kept.body.expired);
    const audit = await a.admin.get(`/audit/v2beta1/events?resource_uid=${old}&operation=delete`);
    t.is(audit.status, 200);
    t.is(audit.body.events.length, 1);
    t.is(audit.body.events[0].actor, 'system:binding-expiry');
    // Arbor acting on its own, not the reconciler: an honest door (it once said `reconciler`).
    t.is(audit.body.events[0].door, 'system');
    const byDoor = await a.admin.get(`/audit/v2beta1/events?door=system&resource_uid=${old}`);
    t.is(byDoor.body.events.length, 1);
    t.is(audit.body.events[0].eventType, 'dev.arbor.iam.role_binding.deleted.v1');
    t.is(await sweeper.sweep(), 0);
  },
);
