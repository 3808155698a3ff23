import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startServer, type Client, type TestServer } from '../helpers/server.js';

/**
 * Access requests from the attacker's side (docs/access-requests.md): what a requester or a
 * would-be approver controls, and what the server must do with it. A request must never
 * reach beyond what its approvers could grant themselves, at the moment they approve.
 */
let s: TestServer;
let org: string;
let team: string;
let otherOrg: string;
let reader: string;
let owner: string;
const R = '/iam/v2beta1/accessRequests';
const on: Record<string, Client> = {};
const ids: Record<string, string> = {};

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'attack-org');
  team = await createGroup(s.admin, 'team', org);
  otherOrg = await createGroup(s.admin, 'other-org');
  reader = await createRole(s.admin, org, 'reader', ['groups.list']);
  owner = await createRole(s.admin, org, 'big', ['groups.list', 'groups.delete', 'roles.list']);
  const looker = await createRole(s.admin, org, 'looker', ['groups.list', 'roles.list']);
  const granter = ['groups.list', 'identity.list', 'roles.list', 'role_bindings.create'];
  const orgGranter = await createRole(s.admin, org, 'granter', granter);
  const foreignGranter = await createRole(s.admin, otherOrg, 'granter', granter);
  const people: Array<[string, string, string]> = [
    ['asker', org, looker],
    ['teamApprover', team, orgGranter],
    ['orgApprover', org, orgGranter],
  ];
  for (const [name, at, role] of people) {
    ids[name] = await createIdentity(s.admin, org, name.toLowerCase());
    await createBinding(s.admin, at, ids[name]!, role);
  }
  ids.foreign = await createIdentity(s.admin, otherOrg, 'foreign');
  await createBinding(s.admin, otherOrg, ids.foreign, foreignGranter);
  for (const name of Object.keys(ids)) {
    const token = (await s.arbor.tokens.sign(ids[name]!, { iss: ISSUER, sub: `sub-${name}` }))
      .token;
    on[name] = s.client(token);
  }
});
test.after.always(async () => {
  await s?.close();
});

async function ask(group: string, roleUid: string, extra: Record<string, unknown> = {}) {
  return on.asker!.post(`${R}/${group}`, {
    roleUid,
    durationSeconds: 600,
    reason: 'attack',
    ...extra,
  });
}

/** The asker withdraws a request: one pending request per role and group. */
async function withdraw(uid: string): Promise<void> {
  const res = await on.asker!.post(`${R}:cancel`, { uid });
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
}

/** An identity made by the admin token, bound at `at`, with a client of its own. */
async function person(name: string, at: string, role: string): Promise<Client> {
  ids[name] = await createIdentity(s.admin, org, name.toLowerCase());
  await createBinding(s.admin, at, ids[name]!, role);
  return (on[name] = s.client(
    (await s.arbor.tokens.sign(ids[name]!, { iss: ISSUER, sub: `sub-${name}` })).token,
  ));
}

test.serial('forged approvals, state and requester in the body are ignored', async (t) => {
  const r = await ask(org, reader, {
    approvals: [{ approver: ids.orgApprover, time: new Date().toISOString(), reason: 'x' }],
    state: 'APPROVED',
    requesterUid: ids.orgApprover,
    timeoutTime: '2999-01-01T00:00:00Z',
    closedBy: ids.orgApprover,
  });
  t.is(r.status, 200);
  t.deepEqual(r.body.approvals, []);
  t.is(r.body.state, 'PENDING');
  t.is(r.body.requesterUid, ids.asker);
  t.true(Date.parse(r.body.timeoutTime) < Date.parse('2999-01-01T00:00:00Z'));
  t.is(r.body.closedBy, undefined);
  await withdraw(r.body.uid);
});

test.serial('an approver below the asked group cannot see or approve it', async (t) => {
  const r = await ask(org, reader);
  // teamApprover holds role_bindings.create at the team only, not at the organization.
  t.is((await on.teamApprover!.get(`${R}/${r.body.uid}`)).status, 404);
  t.is((await on.teamApprover!.post(`${R}:approve`, { uid: r.body.uid })).status, 404);
  t.is((await on.teamApprover!.post(`${R}:deny`, { uid: r.body.uid })).status, 404);
  const inbox = await on.teamApprover!.get(R);
  t.false(JSON.stringify(inbox.body).includes(r.body.uid));
  // The organization's approver may.
  t.is((await on.orgApprover!.get(`${R}/${r.body.uid}`)).status, 200);
  await withdraw(r.body.uid);
});

test.serial('another organization’s approver sees nothing and decides nothing', async (t) => {
  const r = await ask(team, reader);
  t.is((await on.foreign!.get(`${R}/${r.body.uid}`)).status, 404);
  t.is((await on.foreign!.post(`${R}:approve`, { uid: r.body.uid })).status, 404);
  const inbox = await on.foreign!.get(`${R}?state=PENDING`);
  t.is(inbox.body.totalCount, '0');
  await withdraw(r.body.uid);
});

test.serial(
  'a role with capabilities the approver lacks cannot be approved into place',
  async (t) => {
    // `big` holds groups.delete, which no approver holds: only the admin could grant it.
    const r = await ask(team, owner);
    t.is(r.status, 200);
    const refused = await on.orgApprover!.post(`${R}:approve`, { uid: r.body.uid });
    t.is(refused.status, 403);
    const still = await on.asker!.get(`${R}/${r.body.uid}`);
    t.is(still.body.state, 'PENDING');
    t.deepEqual(still.body.approvals, []);
    const bound = await s.admin.get(
      `/iam/v2beta1/roleBindings?identity=${ids.asker}&role=${owner}`,
    );
    t.deepEqual(bound.body.roleBindings, [], 'no binding was made');
    await withdraw(r.body.uid);
  },
);

test.serial(
  'the approver’s right is checked when it approves, not when the request was made',
  async (t) => {
    const r = await ask(team, reader);
    // A second approver who could approve when the request was made loses that right.
    const late = await createIdentity(s.admin, org, 'late-approver');
    const granter = await createRole(s.admin, org, 'late-granter', [
      'groups.list',
      'identity.list',
      'roles.list',
      'role_bindings.create',
    ]);
    const binding = await createBinding(s.admin, org, late, granter);
    const lateClient = s.client(
      (await s.arbor.tokens.sign(late, { iss: ISSUER, sub: 'sub-late' })).token,
    );
    t.is((await lateClient.get(`${R}/${r.body.uid}`)).status, 200);
    t.is((await s.admin.delete(`/iam/v2beta1/roleBindings/${binding}`)).status, 200);
    t.is((await lateClient.post(`${R}:approve`, { uid: r.body.uid })).status, 404);
    await withdraw(r.body.uid);
  },
);

test.serial(
  'a request for a role of another organization is refused as a binding would be',
  async (t) => {
    const foreignRole = await createRole(s.admin, otherOrg, 'foreign-reader', ['groups.list']);
    const r = await ask(team, foreignRole);
    t.is(r.status, 400);
    // And at a group the asker cannot list: not found, whether or not it exists.
    t.is((await ask(otherOrg, reader)).status, 404);
    t.is((await ask(`${otherOrg}/00000000000000aa`, reader)).status, 404);
  },
);

test.serial(
  'two approvals by one person: an identity an approver made and bound does not count',
  async (t) => {
    const twoMan = await createGroup(s.admin, 'two-man', org);
    t.is((await s.admin.post(`${R}:setPolicy`, { groupUid: twoMan, approvals: 2 })).status, 200);
    const maker = await createRole(s.admin, org, 'maker', [
      'groups.list',
      'identity.list',
      'identity.create',
      'roles.list',
      'role_bindings.create',
    ]);
    const boss = await person('boss', org, maker);
    const honest = await person('honest', org, maker);
    const r = await ask(twoMan, reader);
    t.is(r.status, 200);
    t.is((await boss.post(`${R}:approve`, { uid: r.body.uid })).body.state, 'PENDING');
    // The boss makes a second identity it holds the keys of, binds it, approves through it.
    const puppet = await createIdentity(boss, org, 'puppet');
    await createBinding(boss, org, puppet, maker);
    const asPuppet = s.client(
      (await s.arbor.tokens.sign(puppet, { iss: ISSUER, sub: 'sub-puppet' })).token,
    );
    const second = await asPuppet.post(`${R}:approve`, { uid: r.body.uid });
    t.is(second.status, 200);
    t.is(second.body.state, 'PENDING', 'the puppet’s approval does not count');
    // Through one more link: the puppet makes and binds another.
    const puppet2 = await createIdentity(asPuppet, org, 'puppet2');
    await createBinding(asPuppet, org, puppet2, maker);
    const asPuppet2 = s.client(
      (await s.arbor.tokens.sign(puppet2, { iss: ISSUER, sub: 'sub-puppet2' })).token,
    );
    const third = await asPuppet2.post(`${R}:approve`, { uid: r.body.uid });
    t.is(third.body.state, 'PENDING', 'nor does one made through the puppet');
    const bound = await s.admin.get(
      `/iam/v2beta1/roleBindings?identity=${ids.asker}&role=${reader}`,
    );
    t.deepEqual(bound.body.roleBindings, [], 'no binding was made');
    // An identity the boss neither made nor bound is a second person.
    const done = await honest.post(`${R}:approve`, { uid: r.body.uid });
    t.is(done.body.state, 'APPROVED');
    t.truthy(done.body.bindingUid);
  },
);

test.serial(
  'an approval no longer counts once its approver lost the right to give it',
  async (t) => {
    const twoMan = await createGroup(s.admin, 'two-man-lost', org);
    t.is((await s.admin.post(`${R}:setPolicy`, { groupUid: twoMan, approvals: 2 })).status, 200);
    const granter = await createRole(s.admin, org, 'lost-granter', [
      'groups.list',
      'identity.list',
      'roles.list',
      'role_bindings.create',
    ]);
    const leaver = await person('leaver', org, granter);
    const stayer = await person('stayer', org, granter);
    const third = await person('third', org, granter);
    const r = await ask(twoMan, reader);
    t.is((await leaver.post(`${R}:approve`, { uid: r.body.uid })).body.state, 'PENDING');
    const [held] = (await s.admin.get(`/iam/v2beta1/roleBindings?identity=${ids.leaver}`)).body
      .roleBindings as Array<{ uid: string }>;
    await s.admin.delete(`/iam/v2beta1/roleBindings/${held!.uid}`);
    const second = await stayer.post(`${R}:approve`, { uid: r.body.uid });
    t.is(second.status, 200);
    t.is(second.body.state, 'PENDING', 'the leaver’s approval is weighed again and fails');
    t.is(second.body.approvals.length, 2, 'both approvals stay on record');
    const done = await third.post(`${R}:approve`, { uid: r.body.uid });
    t.is(done.body.state, 'APPROVED');
  },
);

test.serial('one pending request per role and group; a second names the first', async (t) => {
  const first = await ask(team, reader);
  t.is(first.status, 200);
  const again = await ask(team, reader, { reason: 'again' });
  t.is(again.status, 409);
  t.true(again.body.message.includes(first.body.uid), again.body.message);
  const info = (again.body.details as any[]).find((d) => d['@type'].endsWith('ResourceInfo'));
  t.is(info?.resourceName, first.body.uid);
  // Concurrent identical asks: the database lets exactly one through.
  await withdraw(first.body.uid);
  const racing = await Promise.all([1, 2, 3, 4, 5].map(() => ask(team, reader)));
  t.deepEqual(racing.map((x) => x.status).sort(), [200, 409, 409, 409, 409]);
  const kept = racing.find((x) => x.status === 200)!.body.uid as string;
  t.true(racing.every((x) => x.status === 200 || x.body.message.includes(kept)));
  // Another role at the same group is another request; after a close the place is free.
  await withdraw(kept);
  t.is((await ask(team, reader)).status, 200);
  const rows = await s.admin.get(`${R}?state=PENDING&requester=${ids.asker}&role=${reader}`);
  const here = (rows.body.accessRequests as any[]).filter((x) => x.groupUid === team);
  t.is(here.length, 1);
  await withdraw(here[0].uid);
});

test.serial('one requester may have at most 20 requests pending', async (t) => {
  const looker = await createRole(s.admin, org, 'spam-looker', ['groups.list', 'roles.list']);
  const spammer = await person('spammer', org, looker);
  const groups: string[] = [];
  for (let i = 0; i < 21; i++) groups.push(await createGroup(s.admin, `spam-${i}`, org));
  const spam = (g: string) =>
    spammer.post(`${R}/${g}`, { roleUid: reader, durationSeconds: 60, reason: 'spam' });
  const made: string[] = [];
  for (const g of groups.slice(0, 20)) {
    const res = await spam(g);
    t.is(res.status, 200);
    made.push(res.body.uid);
  }
  const over = await spam(groups[20]!);
  t.is(over.status, 429);
  t.regex(over.body.message, /at most 20 pending/);
  t.is((await spam(groups[0]!)).status, 409, 'a repeat still names the first');
  await spammer.post(`${R}:cancel`, { uid: made[0] });
  t.is((await spam(groups[20]!)).status, 200, 'a place freed by a close');
});

test.serial(
  'two approvals by one person: an invite an approver made, redeemed by a second identity, does not count',
  async (t) => {
    const twoMan = await createGroup(s.admin, 'two-man-invite', org);
    t.is((await s.admin.post(`${R}:setPolicy`, { groupUid: twoMan, approvals: 2 })).status, 200);
    const inviter = await createRole(s.admin, org, 'inviter', [
      'groups.list',
      'identity.list',
      'roles.list',
      'role_bindings.create',
      'group_invites.create',
    ]);
    const host = await person('host', org, inviter);
    const fair = await person('fair', org, inviter);
    // A second identity of the host's that the host did not create (made by the admin token).
    const alt = await createIdentity(s.admin, org, 'alt');
    const asAlt = s.client((await s.arbor.tokens.sign(alt, { iss: ISSUER, sub: 'sub-alt' })).token);
    const r = await ask(twoMan, reader);
    t.is((await host.post(`${R}:approve`, { uid: r.body.uid })).body.state, 'PENDING');
    const invite = await host.post(`/iam/v2beta1/groupInvites/${org}`, {
      roleUid: inviter,
      ttl: '3600s',
    });
    t.is(invite.status, 200, JSON.stringify(invite.body));
    const redeemed = await asAlt.post('/iam/v2beta1/groupInvites:redeem', {
      code: invite.body.code,
    });
    t.is(redeemed.status, 200, JSON.stringify(redeemed.body));
    const second = await asAlt.post(`${R}:approve`, { uid: r.body.uid });
    t.is(second.status, 200, JSON.stringify(second.body));
    t.is(second.body.state, 'PENDING', 'a binding by the host’s invite owes the host');
    t.is((await fair.post(`${R}:approve`, { uid: r.body.uid })).body.state, 'APPROVED');
  },
);
