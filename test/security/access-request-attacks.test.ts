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
});

test.serial('another organization’s approver sees nothing and decides nothing', async (t) => {
  const r = await ask(team, reader);
  t.is((await on.foreign!.get(`${R}/${r.body.uid}`)).status, 404);
  t.is((await on.foreign!.post(`${R}:approve`, { uid: r.body.uid })).status, 404);
  const inbox = await on.foreign!.get(`${R}?state=PENDING`);
  t.is(inbox.body.totalCount, '0');
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
