import { createHash } from 'node:crypto';
import test from 'ava';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { allPages, createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole, fields } from '../helpers/iam-fixtures.js';
import { startServer, type Client, type TestServer } from '../helpers/server.js';

const I = '/iam/v2beta1/groupInvites';
const REDEEM = `${I}:redeem`;
const viewer = builtinRoleUid('viewer');

let s: TestServer;
let org: string;
let team: string;
let teamRole: string;

/** A client holding a real API token for `identity`, as the STS would issue it. */
async function as(identity: string): Promise<Client> {
  const { token } = await s.arbor.tokens.sign(identity, {
    iss: 'https://test.invalid',
    sub: identity,
  });
  return s.client(token);
}

const identity = (name: string, group = org) => createIdentity(s.admin, group, name);

async function redeemAs(identity: string, body: unknown) {
  return (await as(identity)).post(REDEEM, body);
}

async function invite(group: string, body: Record<string, unknown> = {}) {
  const res = await s.admin.post(`${I}/${group}`, { roleUid: teamRole, ttl: '3600s', ...body });
  if (res.status !== 200) throw new Error(`invite: ${JSON.stringify(res.body)}`);
  return res.body as { uid: string; code: string; createTime: string; expirationTime: string };
}

const violations = (body: any) => fields(body).sort();
const preconditionOf = (body: any) => body.details[1].violations[0].type as string;

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'invite-org');
  team = await createGroup(s.admin, 'invite-team', org);
  teamRole = await createRole(s.admin, team, 'team-viewer', ['groups.list']);
});
test.after.always(async () => {
  await s?.close();
});

test('invites: the code is in the create response only, and only its hash is stored', async (t) => {
  const res = await s.admin.post(`${I}/${org}`, {
    roleUid: viewer,
    ttl: '168h',
    email: 'new.hire@example.com',
    singleUse: true,
  });
  t.is(res.status, 200);
  const inv = res.body;
  t.regex(inv.uid, new RegExp(`^${org}/[0-9a-f]{16}$`));
  t.regex(inv.code, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  t.deepEqual(inv.role, { uid: viewer, name: 'viewer', description: 'Viewer Role (built-in)' });
  t.like(inv, { roleUid: viewer, email: 'new.hire@example.com', singleUse: true });
  t.is(Date.parse(inv.expirationTime) - Date.parse(inv.createTime), 168 * 3600 * 1000);
  t.false('ttl' in inv);
  const secret = inv.code.split('.')[1];
  for (const path of [`${I}/${inv.uid}`, `${I}?uidp.children_of=${org}`, '/iam/v1/group_invites']) {
    const got = await s.admin.get(path);
    t.is(got.status, 200, path);
    t.false(JSON.stringify(got.body).includes(secret), path);
    t.false(JSON.stringify(got.body).includes('"code"'), path);
  }
  const row = await s.db.knex('group_invites').where({ uid: inv.uid }).first();
  t.deepEqual(Buffer.from(row.code_hash), createHash('sha256').update(inv.code).digest());
  t.false(JSON.stringify(row).includes(secret));
});

test('invites: every invalid field is named', async (t) => {
  t.deepEqual(violations((await s.admin.post(`${I}/${org}`, {})).body), ['roleUid', 'ttl']);
  for (const ttl of ['10', '1d', '59s', '721h', '-5s', '1h30m', 3600, '']) {
    const res = await s.admin.post(`${I}/${org}`, { roleUid: viewer, ttl });
    t.is(res.status, 400, String(ttl));
    t.deepEqual(violations(res.body), ['ttl'], String(ttl));
  }
  for (const ttl of ['60s', '3600s', '30m', '1.5h', '720h']) {
    t.is((await s.admin.post(`${I}/${org}`, { roleUid: viewer, ttl })).status, 200, ttl);
  }
  const bad = await s.admin.post(`${I}/${org}`, {
    roleUid: viewer,
    ttl: '60s',
    email: 'not-an-email',
    singleUse: 'yes',
    code: 'chosen-by-client',
    keyId: 'x',
  });
  t.deepEqual(violations(bad.body), ['email', 'keyId', 'singleUse']);
  const below = await s.admin.post(`${I}/${org}`, { roleUid: teamRole, ttl: '60s' });
  t.deepEqual(violations(below.body), ['roleUid']);
  const missingRole = await s.admin.post(`${I}/${org}`, {
    roleUid: `${org}/${'0'.repeat(16)}`,
    ttl: '60s',
  });
  t.deepEqual(violations(missingRole.body), ['roleUid']);
  t.is((await s.admin.post(`${I}/${'5'.repeat(40)}`, { roleUid: viewer, ttl: '60s' })).status, 404);
  // Update is served (role, expiry): a missing invite is NOT_FOUND, not 405.
  t.is((await s.admin.patch(`${I}/${org}/${'1'.repeat(16)}`, {})).status, 404);
});

test('invites: redeeming binds the identity, which then has the role', async (t) => {
  const newcomer = await identity('newcomer');
  const p = { kind: 'identity', uid: newcomer } as const;
  t.false(await s.arbor.authz.can(p, 'groups.list', team));
  const newcomerClient = await as(newcomer);
  t.is((await newcomerClient.get(`/iam/v2beta1/groups/${team}`)).status, 404);
  const inv = await invite(team);
  const res = await redeemAs(newcomer, { code: inv.code });
  t.is(res.status, 200);
  t.regex(res.body.uid, new RegExp(`^${team}/[0-9a-f]{16}$`));
  t.like(res.body, {
    identity: { uid: newcomer, name: 'newcomer' },
    group: { uid: team, name: 'invite-team' },
    role: { uid: teamRole, name: 'team-viewer' },
  });
  t.is((await s.admin.get(`/iam/v2beta1/roleBindings/${res.body.uid}`)).status, 200);
  t.true(await s.arbor.authz.can({ kind: 'identity', uid: newcomer }, 'groups.list', team));
  t.is((await newcomerClient.get(`/iam/v2beta1/groups/${team}`)).status, 200);
  const again = await redeemAs(newcomer, { code: inv.code });
  t.is(again.status, 409);
});

test('invites: a multi-use invite serves several identities', async (t) => {
  const inv = await invite(team);
  for (const name of ['multi-a', 'multi-b']) {
    t.is((await redeemAs(await identity(name), { code: inv.code })).status, 200, name);
  }
  t.is((await s.admin.get(`${I}/${inv.uid}`)).status, 200);
});

test('invites: a single-use invite is refused the second time', async (t) => {
  const inv = await invite(team, { singleUse: true });
  const first = await identity('single-first');
  const second = await identity('single-second');
  t.is((await redeemAs(first, { code: inv.code })).status, 200);
  for (const who of [second, first]) {
    const res = await redeemAs(who, { code: inv.code });
    t.is(res.status, 400);
    t.is(res.body.code, 9);
    t.is(preconditionOf(res.body), 'INVITE_USED');
  }
  const bindings = await s.db.knex('role_bindings').where({ identity_uid: second });
  t.is(bindings.length, 0);
});

test('invites: an expired invite is refused and binds nothing', async (t) => {
  const inv = await invite(team, { ttl: '60s' });
  await s.db
    .knex('group_invites')
    .where({ uid: inv.uid })
    .update({ expires_at: s.db.knex.raw(`now() - interval '1 second'`) });
  const late = await identity('latecomer');
  const res = await redeemAs(late, { code: inv.code });
  t.is(res.status, 400);
  t.is(res.body.message, 'Precondition failed: the invite has expired');
  t.is(preconditionOf(res.body), 'INVITE_EXPIRED');
  t.is((await s.db.knex('role_bindings').where({ identity_uid: late })).length, 0);
});

test('invites: unknown, forged and malformed codes', async (t) => {
  const who = await identity('forger');
  const inv = await invite(team);
  const [uidPart] = inv.code.split('.');
  const forged = `${uidPart}.${'A'.repeat(43)}`;
  const ghost = `${Buffer.from(`${team}/${'0'.repeat(16)}`).toString('base64url')}.${'A'.repeat(43)}`;
  for (const code of [forged, ghost]) {
    const res = await redeemAs(who, { code });
    t.is(res.status, 404);
    t.false(JSON.stringify(res.body).includes(code));
  }
  for (const body of [{ code: 'garbage' }, { code: `${uidPart}.short` }, {}, { code: 7 }]) {
    const res = await redeemAs(who, body);
    t.is(res.status, 400);
    t.deepEqual(violations(res.body), ['code']);
  }
});

test('invites: only an identity of the organization can redeem', async (t) => {
  const inv = await invite(team);
  const admin = await s.admin.post(REDEEM, { code: inv.code });
  t.is(admin.status, 400);
  t.deepEqual(violations(admin.body), ['identity']);
  const elsewhere = await createGroup(s.admin, 'other-org');
  const stranger = await identity('stranger', elsewhere);
  const res = await redeemAs(stranger, { code: inv.code });
  t.is(res.status, 400);
  t.deepEqual(violations(res.body), ['identity']);
  t.is((await redeemAs(await identity('insider', team), { code: inv.code })).status, 200);
});

test('invites: list is newest first by default and honours the list contract', async (t) => {
  const g = await createGroup(s.admin, 'invite-list', org);
  const sub = await createGroup(s.admin, 'invite-list-sub', g);
  const created: Array<{ uid: string; createTime: string }> = [];
  for (let i = 0; i < 5; i++) created.push(await invite(g, { roleUid: viewer }));
  // Creation order as the server sees it: by createTime, then uid for a shared millisecond.
  const made = created
    .sort((a, b) => a.createTime.localeCompare(b.createTime) || (a.uid < b.uid ? -1 : 1))
    .map((i) => i.uid);
  const deep = (await invite(sub, { roleUid: viewer })).uid;
  const dflt = await allPages<{ uid: string }>(
    s.admin,
    `${I}?uidp.children_of=${g}&page_size=2`,
    'groupInvites',
  );
  t.deepEqual(
    dflt.map((p) => p.length),
    [2, 2, 1],
  );
  t.deepEqual(
    dflt.flat().map((i) => i.uid),
    [...made].reverse(),
  );
  const asc = await s.admin.get(`${I}?uidp.children_of=${g}&order_by=created_at`);
  t.deepEqual(
    asc.body.groupInvites.map((i: any) => i.uid),
    made,
  );
  const below = await s.admin.get(`${I}?uidp.descendants_of=${g}`);
  t.is(below.body.totalCount, '6');
  t.is(below.body.groupInvites[0].uid, deep);
  const byGroup = await s.admin.get(`${I}?group=${sub}`);
  t.deepEqual(
    byGroup.body.groupInvites.map((i: any) => i.uid),
    [deep],
  );
  const skipped = await s.admin.get(`${I}?uidp.children_of=${g}&skip=4`);
  t.is(skipped.body.skipped, 4);
  t.deepEqual(
    skipped.body.groupInvites.map((i: any) => i.uid),
    [made[0]],
  );
  t.deepEqual(violations((await s.admin.get(`${I}?order_by=name`)).body), ['order_by']);
});

test('invites: delete, and a group with invites cannot be deleted', async (t) => {
  const g = await createGroup(s.admin, 'invite-delete', org);
  const inv = await invite(g, { roleUid: viewer });
  const blocked = await s.admin.delete(`/iam/v2beta1/groups/${g}`);
  t.is(blocked.status, 400);
  t.is(blocked.body.message, 'Precondition failed: cannot delete group with child group invites');
  t.is(preconditionOf(blocked.body), 'RESOURCE_NOT_EMPTY');
  t.deepEqual((await s.admin.delete(`${I}/${inv.uid}`)).body, {});
  t.is((await s.admin.get(`${I}/${inv.uid}`)).status, 404);
  t.is((await s.admin.delete(`${I}/${inv.uid}`)).status, 404);
  t.is((await s.admin.post(REDEEM, { code: inv.code })).status, 400);
  t.is((await s.admin.delete(`/iam/v2beta1/groups/${g}`)).status, 200);
});

test('invites: creating needs role_bindings.create and the role’s capabilities', async (t) => {
  const base = ['groups.list', 'group_invites.list', 'group_invites.create'];
  const bindRole = async (name: string, caps: string[]) => {
    const id = await identity(name);
    await createBinding(s.admin, org, id, await createRole(s.admin, org, `${name}-role`, caps));
    return id;
  };
  const noBind = await as(await bindRole('inv-no-bind', base));
  // roles.list: a role the caller cannot list is as good as missing (no existence oracle).
  const binder = await as(
    await bindRole('inv-binder', [...base, 'role_bindings.create', 'roles.list']),
  );
  const denied = await noBind.post(`${I}/${team}`, { roleUid: teamRole, ttl: '60s' });
  t.is(denied.status, 403);
  const escalation = await binder.post(`${I}/${team}`, { roleUid: viewer, ttl: '60s' });
  t.is(escalation.status, 403);
  const ok = await binder.post(`${I}/${team}`, { roleUid: teamRole, ttl: '60s' });
  t.is(ok.status, 200);
  t.is((await binder.delete(`${I}/${ok.body.uid}`)).status, 403);
  const outsider = await as(await identity('inv-outsider'));
  t.is((await outsider.get(`${I}/${ok.body.uid}`)).status, 404);
});

test('invites: v1 takes role and answers id, expiration and a v1 role', async (t) => {
  const res = await s.admin.post(`/iam/v1/group_invites/${org}`, {
    group: org,
    role: viewer,
    ttl: '3600s',
  });
  t.is(res.status, 200);
  t.deepEqual(Object.keys(res.body).sort(), ['code', 'expiration', 'id', 'role']);
  t.deepEqual(res.body.role, { id: viewer, name: 'viewer', description: 'Viewer Role (built-in)' });
  const listed = await s.admin.get(`/iam/v1/group_invites?id=${res.body.id}`);
  t.deepEqual(listed.body.items, [
    { id: res.body.id, expiration: res.body.expiration, role: res.body.role },
  ]);
  t.is((await s.admin.delete(`/iam/v1/group_invites/${res.body.id}`)).status, 200);
});

test('invites: Update changes the role and the expiry under the mask rules', async (t) => {
  const inv = await invite(team);
  const got = (await s.admin.get(`${I}/${inv.uid}`)).body;
  t.is(got.updateTime, got.createTime, 'a fresh invite was last changed when made');

  // Role only (no mask: what the body has); the code keeps working for the new role.
  const otherRole = await createRole(s.admin, team, 'team-lister', ['groups.list']);
  const roled = await s.admin.patch(`${I}/${inv.uid}`, { roleUid: otherRole });
  t.is(roled.status, 200, JSON.stringify(roled.body));
  t.is(roled.body.roleUid, otherRole);
  t.is(roled.body.role.name, 'team-lister');
  t.is(roled.body.expirationTime, inv.expirationTime);
  t.true(Date.parse(roled.body.updateTime) >= Date.parse(got.updateTime));
  t.false('code' in roled.body);

  // Expiry by mask; an echoed resource's output-only fields are ignored.
  const later = new Date(Date.now() + 48 * 3600 * 1000).toISOString();
  const moved = await s.admin.patch(`${I}/${inv.uid}?updateMask=expirationTime`, {
    ...roled.body,
    expirationTime: later,
    roleUid: viewer,
  });
  t.is(moved.status, 200, JSON.stringify(moved.body));
  t.is(Date.parse(moved.body.expirationTime), Date.parse(later));
  t.is(moved.body.roleUid, otherRole, 'outside the mask nothing changes');

  const redeemer = await identity('invite-updated');
  const bound = await redeemAs(redeemer, { code: inv.code });
  t.is(bound.status, 200, JSON.stringify(bound.body));
  t.is(bound.body.role.uid, otherRole);
});

test('invites: Update refuses fixed fields, bad expiries and roles the caller cannot grant', async (t) => {
  const inv = await invite(team);
  const email = await s.admin.patch(`${I}/${inv.uid}?updateMask=email`, { email: 'x@y.z' });
  t.is(email.status, 400);
  t.deepEqual(violations(email.body), ['update_mask']);
  const past = await s.admin.patch(`${I}/${inv.uid}`, {
    expirationTime: new Date(Date.now() - 1000).toISOString(),
  });
  t.is(past.status, 400);
  t.deepEqual(violations(past.body), ['expirationTime']);
  const far = await s.admin.patch(`${I}/${inv.uid}`, {
    expirationTime: new Date(Date.now() + 60 * 24 * 3600 * 1000).toISOString(),
  });
  t.deepEqual(violations(far.body), ['expirationTime']);
  const notARole = await s.admin.patch(`${I}/${inv.uid}`, { roleUid: 'f'.repeat(40) });
  t.deepEqual(violations(notARole.body), ['roleUid']);
  const missing = await s.admin.patch(`${I}/${team}/${'0'.repeat(16)}`, { roleUid: viewer });
  t.is(missing.status, 404);

  // A member who may only list invites may not change them.
  const member = await identity('invite-lister');
  const lister = await createRole(s.admin, team, 'invite-lister', ['group_invites.list']);
  await createBinding(s.admin, team, member, lister);
  const denied = await (await as(member)).patch(`${I}/${inv.uid}`, { roleUid: viewer });
  t.is(denied.status, 403);
});
