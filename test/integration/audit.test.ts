import test from 'ava';
import { systemPrincipal } from '../../src/auth/principal.js';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { allPages, createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { startServer, type Client, type TestServer } from '../helpers/server.js';

const AUDIT = '/audit/v2beta1/events';
const SECRET = 'client-secret-that-must-never-be-recorded';

let s: TestServer;
let org: string;

interface Rec {
  id: string;
  time: string;
  actor: string;
  door: string;
  requestId?: string;
  credential?: string;
  resourceType: string;
  resourceUid: string;
  operation: string;
  eventType: string;
  changedFields: string[];
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
}

async function ok(res: Promise<{ status: number; body: any }>, what: string): Promise<any> {
  const r = await res;
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Every record of one resource, oldest first. */
async function recordsOf(uid: string, c: Client = s.admin): Promise<Rec[]> {
  const q = `${AUDIT}?resource_uid=${encodeURIComponent(uid)}&order_by=time%20asc&page_size=200`;
  return (await ok(c.get(q), 'audit list')).events as Rec[];
}

async function as(identity: string): Promise<Client> {
  const { token } = await s.arbor.tokens.sign(identity, {
    iss: 'https://t.invalid',
    sub: identity,
  });
  return s.client(token);
}

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'audit-org');
});
test.after.always(async () => {
  await s?.close();
});

test('audit: every REST write path leaves one record per change, with door, request and actor', async (t) => {
  const a = s.admin;
  const g = await createGroup(a, 'paths', org);
  await ok(a.patch(`/iam/v2beta1/groups/${g}`, { description: 'changed' }), 'group update');

  const id = await createIdentity(a, g, 'robot');
  await ok(a.patch(`/iam/v2beta1/identities/${id}`, { description: 'bot' }), 'identity update');

  const role = (await ok(
    a.post(`/iam/v2beta1/roles/${g}`, { name: 'r', capabilities: ['groups.list'] }),
    'role create',
  )) as { uid: string };
  await ok(a.patch(`/iam/v2beta1/roles/${role.uid}`, { description: 'x' }), 'role update');

  const binding = await createBinding(a, g, id, role.uid);
  await ok(
    a.patch(`/iam/v2beta1/roleBindings/${binding}`, { roleUid: builtinRoleUid('viewer') }),
    'binding update',
  );

  const repo = (await ok(a.post(`/registry/v2beta1/repos/${g}`, { name: 'app' }), 'repo')) as {
    uid: string;
  };
  await ok(a.patch(`/registry/v2beta1/repos/${repo.uid}`, { description: 'd' }), 'repo update');
  const digest = (c: string) => `sha256:${c.repeat(64)}`;
  const tag = (await ok(
    a.post(`/registry/v2beta1/tags/${repo.uid}`, { name: 'latest', digest: digest('a') }),
    'tag',
  )) as { uid: string };
  await ok(
    a.post(`/registry/v2beta1/tags/${repo.uid}`, { name: 'latest', digest: digest('b') }),
    'tag move',
  );

  const idp = (await ok(
    a.post(`/iam/v2beta1/identityProviders/${g}`, {
      name: 'sso',
      defaultRole: builtinRoleUid('viewer'),
      oidc: { issuer: 'https://accounts.example.com', clientId: 'c', clientSecret: SECRET },
    }),
    'idp',
  )) as { uid: string };
  await ok(a.patch(`/iam/v2beta1/identityProviders/${idp.uid}`, { description: 'd' }), 'idp up');

  await ok(
    a.post(`/iam/v2beta1/accountAssociations/${g}`, {
      name: 'clouds',
      amazon: { account: '123456789012' },
    }),
    'aa',
  );
  await ok(a.patch(`/iam/v2beta1/accountAssociations/${g}`, { description: 'd' }), 'aa up');

  const invite = (await ok(
    a.post(`/iam/v2beta1/groupInvites/${g}`, { roleUid: builtinRoleUid('viewer'), ttl: '3600s' }),
    'invite',
  )) as { uid: string; code: string };
  const redeemer = await createIdentity(a, org, 'redeemer');
  const redeemed = (await ok(
    (await as(redeemer)).post('/iam/v2beta1/groupInvites:redeem', { code: invite.code }),
    'redeem',
  )) as { uid: string };

  const sub = (await ok(
    a.post(`/events/v2beta1/subscriptions/${g}`, {
      name: 'hook',
      sink: 'https://hooks.example.com/arbor',
    }),
    'subscription',
  )) as { uid: string };
  await ok(a.patch(`/events/v2beta1/subscriptions/${sub.uid}`, { description: 'd' }), 'sub up');

  // Deletes, leaves first.
  for (const path of [
    `/events/v2beta1/subscriptions/${sub.uid}`,
    `/iam/v2beta1/groupInvites/${invite.uid}`,
    `/iam/v2beta1/roleBindings/${redeemed.uid}`,
    `/iam/v2beta1/roleBindings/${binding}`,
    `/iam/v2beta1/roles/${role.uid}`,
    `/iam/v2beta1/identities/${id}`,
    `/registry/v2beta1/tags/${tag.uid}`,
    `/registry/v2beta1/repos/${repo.uid}`,
    `/iam/v2beta1/identityProviders/${idp.uid}`,
    `/iam/v2beta1/accountAssociations/${g}`,
  ]) {
    await ok(a.delete(path), `delete ${path}`);
  }

  const expect: Array<[string, string, string[]]> = [
    [id, 'iam.arbor.dev/Identity', ['create', 'update', 'delete']],
    [role.uid, 'iam.arbor.dev/Role', ['create', 'update', 'delete']],
    [binding, 'iam.arbor.dev/RoleBinding', ['create', 'update', 'delete']],
    [redeemed.uid, 'iam.arbor.dev/RoleBinding', ['create', 'delete']],
    [repo.uid, 'registry.arbor.dev/Repo', ['create', 'update', 'delete']],
    [tag.uid, 'registry.arbor.dev/Tag', ['create', 'update', 'delete']],
    [idp.uid, 'iam.arbor.dev/IdentityProvider', ['create', 'update', 'delete']],
    [invite.uid, 'iam.arbor.dev/GroupInvite', ['create', 'delete']],
    [sub.uid, 'events.arbor.dev/Subscription', ['create', 'update', 'delete']],
  ];
  for (const [uid, type, ops] of expect) {
    const recs = await recordsOf(uid);
    t.deepEqual(
      recs.map((r) => r.operation),
      ops,
      `${type} ${uid}`,
    );
    for (const r of recs) t.is(r.resourceType, type);
  }
  // The account association shares its group's uid: filter by type.
  const aa = (await recordsOf(g)).filter((r) => r.resourceType.endsWith('AccountAssociation'));
  t.deepEqual(
    aa.map((r) => r.operation),
    ['create', 'update', 'delete'],
  );
  const groupRecs = (await recordsOf(g)).filter((r) => r.resourceType === 'iam.arbor.dev/Group');
  t.deepEqual(
    groupRecs.map((r) => r.eventType),
    ['dev.arbor.iam.group.created.v1', 'dev.arbor.iam.group.updated.v1'],
  );
  t.deepEqual(groupRecs[1]!.changedFields, ['description']);
  t.is(groupRecs[1]!.before!.description, '');
  t.is(groupRecs[1]!.after!.description, 'changed');

  // Who, through what: the admin token over REST; the redeemer through its own token.
  const [created] = await recordsOf(id);
  t.is(created!.actor, 'admin');
  t.is(created!.door, 'rest');
  t.regex(created!.requestId ?? '', /^[0-9a-f-]{36}$/);
  t.regex(created!.credential ?? '', /^[0-9a-f]{16}$/);
  const [byRedeem] = await recordsOf(redeemed.uid);
  t.is(byRedeem!.actor, `identity:${redeemer}`);

  // Secrets and invite codes are never recorded, wherever they would have gone.
  const everything = JSON.stringify(
    (
      await allPages<Rec>(s.admin, `${AUDIT}?uidp.descendants_of=${org}&page_size=200`, 'events')
    ).flat(),
  );
  t.false(everything.includes(SECRET));
  t.false(everything.includes(invite.code));
});

test('audit: the request id a client sends is the one recorded', async (t) => {
  const res = await s.admin.raw(`/iam/v2beta1/groups/${org}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'trace-me-123' },
    body: JSON.stringify({ name: 'traced' }),
  });
  t.is(res.status, 200);
  const [rec] = await recordsOf((res.body as { uid: string }).uid);
  t.is(rec!.requestId, 'trace-me-123');
});

test('audit: a write rolled back at commit leaves no record', async (t) => {
  // A deferred constraint trigger fails the commit of one particular group: the group
  // insert and its audit record are in the transaction that fails.
  await s.db.knex.raw(`
    CREATE FUNCTION refuse_doomed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.name = 'doomed' THEN RAISE EXCEPTION 'refused at commit'; END IF;
      RETURN NULL;
    END $$;
    CREATE CONSTRAINT TRIGGER groups_refuse_doomed AFTER INSERT ON groups
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_doomed();
  `);
  try {
    const doomed = () => s.db.knex('audit_events').whereRaw("after->>'name' = 'doomed'");
    const res = await s.admin.post(`/iam/v2beta1/groups/${org}`, { name: 'doomed' });
    t.is(res.status, 500);
    t.deepEqual(await doomed(), []);
    t.is((await s.db.knex('groups').where({ name: 'doomed' })).length, 0);
    // The same path commits (and records) when nothing refuses it.
    const fine = await s.admin.post(`/iam/v2beta1/groups/${org}`, { name: 'spared' });
    t.is(fine.status, 200);
    t.is((await recordsOf(fine.body.uid)).length, 1);
  } finally {
    await s.db.knex.raw(
      'DROP TRIGGER groups_refuse_doomed ON groups; DROP FUNCTION refuse_doomed();',
    );
  }
});

test('audit: a write refused by the rules leaves no record', async (t) => {
  const g = await createGroup(s.admin, 'refused', org);
  await createGroup(s.admin, 'child', g);
  const n = (await recordsOf(g)).length;
  const res = await s.admin.delete(`/iam/v2beta1/groups/${g}`);
  t.is(res.status, 400);
  t.is((await recordsOf(g)).length, n);
});

test('audit: the trail is append-only in the database itself', async (t) => {
  await createGroup(s.admin, 'immutable', org);
  for (const sql of [
    "UPDATE audit_events SET actor = 'someone-else'",
    'DELETE FROM audit_events',
    'TRUNCATE audit_events',
  ]) {
    const e = await t.throwsAsync(s.db.knex.raw(sql));
    t.regex(e!.message, /append-only/);
  }
});

test('audit.list: owners see their subtree, viewers and outsiders see nothing', async (t) => {
  const a = s.admin;
  const left = await createGroup(a, 'left', org);
  const right = await createGroup(a, 'right', org);
  const inLeft = await createGroup(a, 'in-left', left);
  await createGroup(a, 'in-right', right);
  const owner = await createIdentity(a, org, 'left-owner');
  const viewer = await createIdentity(a, org, 'org-viewer');
  await createBinding(a, left, owner, builtinRoleUid('owner'));
  await createBinding(a, org, viewer, builtinRoleUid('viewer'));

  const asOwner = await as(owner);
  const seen = (await allPages<Rec>(asOwner, `${AUDIT}?page_size=200`, 'events')).flat();
  t.true(seen.length > 0);
  t.true(seen.every((r) => r.resourceUid === left || r.resourceUid.startsWith(`${left}/`)));
  t.true(seen.some((r) => r.resourceUid === inLeft));

  // Asking for someone else's subtree answers an empty page, never their records.
  const other = await asOwner.get(`${AUDIT}?uidp.descendants_of=${right}`);
  t.is(other.status, 200);
  t.deepEqual(other.body.events, []);

  const asViewer = await as(viewer);
  const none = await asViewer.get(AUDIT);
  t.is(none.status, 200);
  t.deepEqual(none.body.events, []);
  t.is(none.body.totalCount, '0');
});

test('audit list: pages in time order with filters, and refuses unknown parameters', async (t) => {
  const g = await createGroup(s.admin, 'paged', org);
  const made: string[] = [];
  for (let i = 0; i < 5; i++) made.push(await createGroup(s.admin, `p${i}`, g));
  const pages = await allPages<Rec>(
    s.admin,
    `${AUDIT}?uidp.children_of=${g}&order_by=time%20asc&page_size=2`,
    'events',
  );
  t.deepEqual(
    pages.map((p) => p.length),
    [2, 2, 1],
  );
  t.deepEqual(
    pages.flat().map((r) => r.resourceUid),
    made,
  );
  const newest = await s.admin.get(`${AUDIT}?uidp.children_of=${g}&page_size=1`);
  t.is(newest.body.events[0].resourceUid, made[4]);
  t.is(newest.body.totalCount, '5');

  const all = pages.flat();
  const from = all[2]!.time;
  const window = await s.admin.get(
    `${AUDIT}?uidp.children_of=${g}&order_by=time%20asc&start_time=${from}&actor=admin&resource_type=iam.arbor.dev/Group&operation=create`,
  );
  t.is(window.status, 200);
  t.true(window.body.events.every((r: Rec) => r.time >= from));
  t.true(window.body.events.length >= 1 && window.body.events.length <= 3);
  const until = await s.admin.get(
    `${AUDIT}?uidp.children_of=${g}&end_time=${encodeURIComponent(all[0]!.time)}`,
  );
  t.true(until.body.events.every((r: Rec) => r.time < all[0]!.time));
  t.deepEqual(
    (await s.admin.get(`${AUDIT}?actor=identity:nobody&uidp.children_of=${g}`)).body.events,
    [],
  );

  const bad = await s.admin.get(`${AUDIT}?bogus=1&start_time=yesterday`);
  t.is(bad.status, 400);
  t.is(bad.body.code, 3);
  const noWrite = await s.admin.post(AUDIT, {});
  t.true(noWrite.status === 404 || noWrite.status === 405 || noWrite.status === 501);
});

test('audit: the reconciler door is recorded for changes it makes through the services', async (t) => {
  const reconciler = systemPrincipal('reconciler');
  const g = await s.arbor.services.groups.create(reconciler, org, { name: 'from-crd' });
  await s.arbor.services.groups.update(reconciler, g.uid, { description: 'synced' }, undefined);
  const recs = await recordsOf(g.uid);
  t.deepEqual(
    recs.map((r) => [r.operation, r.actor, r.door]),
    [
      ['create', 'system:reconciler', 'reconciler'],
      ['update', 'system:reconciler', 'reconciler'],
    ],
  );
  t.is(recs[0]!.requestId, undefined);
});
