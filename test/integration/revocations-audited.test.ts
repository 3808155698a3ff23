import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { systemPrincipal } from '../../src/auth/principal.js';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

/*
 * Revocations are audited: every role binding that goes away is its own `role_binding.deleted`
 * audit record and its own queued event, in the transaction that deletes it.
 *
 * Every way a row can leave `role_bindings` (from a grep of src/ for `role_bindings` with
 * `.del(` or `DELETE FROM`, and of the migrations for `ON DELETE CASCADE`, triggers and
 * rules; the last test below keeps this list honest):
 *
 *   - KnexRoleBindingStore.deleteAll (`DELETE FROM role_bindings WHERE uid IN (…)`), the one
 *     statement, called only by `revokeBindings` (resources/role-bindings/revoke-bindings.ts),
 *     which records each deleted row. Its callers, each a path below:
 *       1. RoleBindingService.delete: REST and gRPC DELETE of a binding, and the RoleBinding
 *          reconciler's finalizer (it calls the service as a system principal);
 *       2. IdentityService.delete: REST and gRPC DELETE of an identity, and the Identity
 *          reconciler's finalizer; cause IDENTITY_DELETED;
 *       3. BindingExpirySweeper.sweep: expired bindings past retention; cause EXPIRED.
 *   - Foreign keys of role_bindings: `role_bindings_identity_fk` was ON DELETE CASCADE
 *     (0002), the silent path this issue found; RESTRICT since migration 0020. The role
 *     and group keys are RESTRICT, and both services refuse first:
 *       4. RoleService.delete of a bound role: FAILED_PRECONDITION RESOURCE_IN_USE;
 *       5. GroupService.delete of a group holding bindings: FAILED_PRECONDITION
 *          RESOURCE_NOT_EMPTY.
 *   - Not deleting paths: invite redemption and people's sign-in insert bindings
 *     (user-store's raw INSERT); account associations, identity providers and group invites
 *     never touch the table. No trigger or rule deletes from it (0018's triggers only notify).
 *
 * A ledger trigger (test-only) notes every uid that leaves the table, by whatever path, so
 * "a record for each" is checked against what really went, not against what the paths
 * were expected to delete.
 */

let s: TestServer;
let org: string;
let folder: string;
let viewerOnly: string;
const DELETED = 'dev.arbor.iam.role_binding.deleted.v1';
const B = '/iam/v2beta1/roleBindings';

interface RecordRow {
  id: string;
  resource_uid: string;
  actor: string;
  door: string;
  cause: { reason: string; resourceType?: string; resourceUid?: string } | null;
  cascaded: Array<{ resourceType: string; resourceUid: string; operation: string }>;
  queued: number;
}

/** The role_binding.deleted records of `uids` (or all), each with its queued deliveries. */
async function deletedRecords(uids?: string[]): Promise<RecordRow[]> {
  const k = s.db.knex;
  const q = k('audit_events as a')
    .where('a.event_type', DELETED)
    .select('a.id', 'a.resource_uid', 'a.actor', 'a.door', 'a.cause', 'a.cascaded')
    .select(k.raw('(SELECT count(*)::int FROM event_outbox o WHERE o.event_seq = a.seq) AS queued'))
    .orderBy('a.seq');
  if (uids) void q.whereIn('a.resource_uid', uids);
  return (await q) as RecordRow[];
}

async function ledger(): Promise<string[]> {
  const rows = (await s.db.knex('test_binding_ledger').select('uid')) as Array<{ uid: string }>;
  return rows.map((r) => r.uid).sort();
}

/**
 * Runs `fn` while a test-only trigger makes every `event` on a row of `table` matching
 * `condition` (SQL over OLD or NEW) fail, as a fault in the middle of a transaction would;
 * the trigger is dropped afterwards, whatever `fn` does.
 */
async function withRefusingTrigger(
  table: string,
  event: 'DELETE' | 'INSERT',
  condition: string,
  fn: () => Promise<void>,
): Promise<void> {
  const name = `test_refuse_${table}_${event.toLowerCase()}`;
  await s.db.knex.raw(`
    CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'refused by the test';
    END
    $$;
    CREATE TRIGGER ${name} BEFORE ${event} ON ${table}
      FOR EACH ROW WHEN (${condition}) EXECUTE FUNCTION ${name}();
  `);
  try {
    await fn();
  } finally {
    await s.db.knex.raw(`DROP TRIGGER ${name} ON ${table}; DROP FUNCTION ${name}();`);
  }
}

async function bindingExists(uid: string): Promise<boolean> {
  return (await s.db.knex('role_bindings').where({ uid }).first('uid')) !== undefined;
}

test.before(async () => {
  s = await startServer({ ARBOR_BINDING_RETENTION_SECONDS: '0' });
  org = await createGroup(s.admin, 'revocations-org');
  folder = await createGroup(s.admin, 'folder', org);
  viewerOnly = await createRole(s.admin, org, 'viewer-only', ['groups.list']);
  // A subscriber at the top takes every event of the tree: each record queues one delivery.
  const sub = await s.admin.post(`/events/v2beta1/subscriptions/${org}`, {
    name: 'siem',
    sink: 'https://siem.example.com/arbor',
  });
  if (sub.status !== 200) throw new Error(`subscription: ${JSON.stringify(sub.body)}`);
  await s.db.knex.raw(`
    CREATE TABLE test_binding_ledger (uid text NOT NULL);
    CREATE FUNCTION test_binding_ledger_note() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO test_binding_ledger (uid) VALUES (OLD.uid);
      RETURN OLD;
    END
    $$;
    CREATE TRIGGER test_binding_ledger AFTER DELETE ON role_bindings
      FOR EACH ROW EXECUTE FUNCTION test_binding_ledger_note();
  `);
});
test.after.always(async () => {
  await s?.close();
});

test.serial(
  'revocations: every path that deletes a binding leaves its own record and event',
  async (t) => {
    const viewer = builtinRoleUid('viewer');
    const ci = await createIdentity(s.admin, org, 'ci');
    const bot = await createIdentity(s.admin, org, 'bot');
    const temp = await createIdentity(s.admin, org, 'temp');

    // 1. A direct delete, through REST and as the reconciler does it.
    const direct = await createBinding(s.admin, folder, ci, viewer);
    t.is((await s.admin.delete(`${B}/${direct}`)).status, 200);
    const byReconciler = await createBinding(s.admin, org, ci, viewerOnly);
    await s.arbor.services.roleBindings.delete(systemPrincipal('reconciler'), byReconciler);

    // 2. An identity's delete takes its bindings along: through REST ...
    const ciAtOrg = await createBinding(s.admin, org, ci, viewer);
    const ciAtFolder = await createBinding(s.admin, folder, ci, viewerOnly);
    t.is((await s.admin.delete(`/iam/v2beta1/identities/${ci}`)).status, 200);
    // ... and through the Identity reconciler's finalizer.
    const botAtFolder = await createBinding(s.admin, folder, bot, viewer);
    await s.arbor.services.identities.delete(systemPrincipal('reconciler'), bot);

    // 3. The expiry sweeper (retention 0 here).
    const expiring = await s.admin.post(`${B}/${folder}`, {
      identityUid: temp,
      roleUid: viewer,
      expireTime: new Date(Date.now() + 3_600_000).toISOString(),
    });
    t.is(expiring.status, 200);
    const expired = expiring.body.uid as string;
    await s.db
      .knex('role_bindings')
      .where({ uid: expired })
      .update({ expire_time: new Date(Date.now() - 60_000) });
    t.is(await s.arbor.bindingSweeper.sweep(), 1);

    // 4, 5. A bound role, and a group holding a binding, cannot be deleted at all.
    const held = await createBinding(s.admin, folder, temp, viewerOnly);
    const role = await s.admin.delete(`/iam/v2beta1/roles/${viewerOnly}`);
    t.is(role.status, 400);
    t.is(role.body.code, 9);
    const group = await s.admin.delete(`/iam/v2beta1/groups/${folder}`);
    t.is(group.status, 400);
    t.is(group.body.code, 9);
    t.true(await bindingExists(held));

    const gone = [direct, byReconciler, ciAtOrg, ciAtFolder, botAtFolder, expired].sort();
    t.deepEqual(await ledger(), gone, 'exactly these rows left role_bindings');
    const records = await deletedRecords();
    t.deepEqual(
      records.map((r) => r.resource_uid).sort(),
      gone,
      'one role_binding.deleted record per binding that went, and no other',
    );
    for (const r of records) t.is(r.queued, 1, `the event of ${r.resource_uid} is queued`);

    const of = (uid: string) => records.find((r) => r.resource_uid === uid)!;
    t.is(of(direct).cause, null);
    t.is(of(direct).actor, 'admin');
    t.is(of(byReconciler).door, 'reconciler');
    const identityCause = (uid: string) => ({
      reason: 'IDENTITY_DELETED',
      resourceType: 'iam.arbor.dev/Identity',
      resourceUid: uid,
    });
    t.deepEqual(of(ciAtOrg).cause, identityCause(ci));
    t.deepEqual(of(ciAtFolder).cause, identityCause(ci));
    t.is(of(ciAtFolder).actor, 'admin', 'the one who deleted the identity revoked its bindings');
    t.deepEqual(of(botAtFolder).cause, identityCause(bot));
    t.is(of(botAtFolder).door, 'reconciler');
    t.deepEqual(of(expired).cause, { reason: 'EXPIRED' });
    t.is(of(expired).actor, 'system:binding-expiry');

    // The identity's own record lists what went with it, and comes after those records.
    const identityRecord = await s.admin.get(
      `/audit/v2beta1/events?resource_uid=${ci}&operation=delete`,
    );
    t.is(identityRecord.body.events.length, 1);
    const rec = identityRecord.body.events[0];
    t.deepEqual(
      rec.cascaded,
      [ciAtOrg, ciAtFolder].sort().map((uid) => ({
        resourceType: 'iam.arbor.dev/RoleBinding',
        resourceUid: uid,
        operation: 'delete',
      })),
    );
    t.true(rec.id > of(ciAtOrg).id && rec.id > of(ciAtFolder).id);

    // The audit API shows the cascaded record in the shape of a direct delete, with its cause.
    const shown = await s.admin.get(`/audit/v2beta1/events?resource_uid=${ciAtOrg}`);
    const deleted = shown.body.events.find((e: { operation: string }) => e.operation === 'delete');
    t.is(deleted.eventType, DELETED);
    t.is(deleted.before.uid, ciAtOrg);
    t.deepEqual(deleted.before.identity, { uid: ci });
    t.deepEqual(deleted.cause, identityCause(ci));
    t.false('after' in deleted);
  },
);

test.serial(
  'revocations: a delete that fails leaves neither its records nor its events',
  async (t) => {
    const keep = await createIdentity(s.admin, org, 'keep');
    const a = await createBinding(s.admin, org, keep, builtinRoleUid('viewer'));
    const b = await createBinding(s.admin, folder, keep, viewerOnly);
    const before = await ledger();
    // The identity's own row refuses to go, after its bindings went in the same transaction.
    await withRefusingTrigger('identities', 'DELETE', "OLD.name = 'keep'", async () => {
      const res = await s.admin.delete(`/iam/v2beta1/identities/${keep}`);
      t.not(res.status, 200);
    });
    t.true(await bindingExists(a));
    t.true(await bindingExists(b));
    t.deepEqual(await ledger(), before);
    t.deepEqual(await deletedRecords([a, b]), [], 'no record, and so no queued event');

    // And the other way round: a record that cannot be written undoes the delete.
    await s.db
      .knex('role_bindings')
      .where({ uid: b })
      .update({ expire_time: new Date(Date.now() - 60_000) });
    await withRefusingTrigger('audit_events', 'INSERT', `NEW.resource_uid = '${b}'`, async () => {
      await t.throwsAsync(s.arbor.bindingSweeper.sweep());
    });
    t.true(await bindingExists(b), 'the sweep rolled back');
    t.deepEqual(await ledger(), before);
    t.deepEqual(await deletedRecords([a, b]), []);
    // With nothing refusing, the same sweep records it.
    t.is(await s.arbor.bindingSweeper.sweep(), 1);
    t.is((await deletedRecords([b])).length, 1);
  },
);

test.serial(
  'revocations: a reader sees in cascaded only the bindings whose records it may read',
  async (t) => {
    // An owner of the folder reads the folder's trail; the organization's is not theirs.
    const auditor = await createIdentity(s.admin, org, 'auditor');
    await createBinding(s.admin, folder, auditor, builtinRoleUid('owner'));
    const { token } = await s.arbor.tokens.sign(auditor, { iss: 'https://t.invalid', sub: 'a' });
    const worker = await createIdentity(s.admin, folder, 'worker');
    const here = await createBinding(s.admin, folder, worker, builtinRoleUid('viewer'));
    const above = await createBinding(s.admin, org, worker, viewerOnly);
    t.is((await s.admin.delete(`/iam/v2beta1/identities/${worker}`)).status, 200);

    const q = `/audit/v2beta1/events?resource_uid=${worker}&operation=delete`;
    const uids = (body: { events: Array<{ cascaded?: Array<{ resourceUid: string }> }> }) =>
      (body.events[0]?.cascaded ?? []).map((c) => c.resourceUid).sort();
    t.deepEqual(uids((await s.admin.get(q)).body), [here, above].sort());
    const seen = await s.client(token).get(q);
    t.is(seen.status, 200);
    t.is(seen.body.events.length, 1);
    t.deepEqual(uids(seen.body), [here], 'the binding above the folder is not named');
    // Its own record is the auditor's to read; the other one's is not.
    const own = await s.client(token).get(`/audit/v2beta1/events?resource_uid=${here}`);
    t.true(own.body.events.some((e: { operation: string }) => e.operation === 'delete'));
    const other = await s.client(token).get(`/audit/v2beta1/events?resource_uid=${above}`);
    t.deepEqual(other.body.events, []);
  },
);

/** Every `.ts` file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sources(join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

test.serial(
  'revocations: nothing but the store deletes binding rows, and no key cascades into them',
  async (t) => {
    // A cascade would delete bindings inside the database, unseen by any record.
    const cascades = (await s.db.knex.raw(
      `SELECT conname FROM pg_constraint
        WHERE conrelid = 'role_bindings'::regclass AND contype = 'f' AND confdeltype = 'c'`,
    )) as { rows: unknown[] };
    t.deepEqual(cascades.rows, []);
    const rules = (await s.db.knex.raw(
      `SELECT rulename FROM pg_rules WHERE definition ILIKE '%delete from%role_bindings%'`,
    )) as { rows: unknown[] };
    t.deepEqual(rules.rows, []);

    // Each Knex `.del(` is credited to the table its chain started from; raw SQL by its text.
    const deleters: string[] = [];
    for (const file of sources('src')) {
      const text = readFileSync(file, 'utf8');
      if (/DELETE\s+FROM\s+role_bindings/i.test(text)) deleters.push(`${file} (raw SQL)`);
      for (const m of text.matchAll(/\.del\(/g)) {
        const tables = [...text.slice(0, m.index).matchAll(/\(\s*['"`]([a-z_]+)['"`]\s*\)/g)];
        if (tables.at(-1)?.[1] === 'role_bindings') deleters.push(file);
      }
    }
    t.deepEqual(deleters, [join('src', 'db', 'stores', 'role-binding-store.ts')]);
    const store = readFileSync(join('src', 'db', 'stores', 'role-binding-store.ts'), 'utf8');
    t.regex(store, /async deleteAll\([^)]*\)[^{]*\{[^}]*\.del\(\)/, 'the one delete is deleteAll');
    // And deleteAll has exactly one caller: the function that records what it deleted.
    const callers = sources('src').filter((f) => /\.deleteAll\(/.test(readFileSync(f, 'utf8')));
    t.deepEqual(callers, [join('src', 'resources', 'role-bindings', 'revoke-bindings.ts')]);
  },
);
