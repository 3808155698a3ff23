import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { startServer, type Client, type TestServer } from '../helpers/server.js';

/**
 * Access requests end to end (docs/access-requests.md), on whichever database the run
 * uses (`npm test` runs it on PGlite and PostgreSQL): request → approvals (N of M, never
 * one's own, only by whoever could create the binding) → use → expiry, the grant denied
 * 1 ms after it ends on both workers (on PostgreSQL, worker b answers through its read
 * caches); deny, cancel and timeout; and what a caller who is not an approver may see.
 */
let db: TestDatabase;
let a: TestServer;
let b: TestServer;
let org: string;
let team: string;
let reader: string;
/** An identity in the team: reading it takes `identity.list`, which `reader` gives. */
let target: string;
const R = '/iam/v2beta1/accessRequests';

const ids: Record<string, string> = {};
const on: Record<string, Client> = {};

test.before(async () => {
  db = await freshDatabase();
  a = await startServer({}, { database: db });
  b = await startServer({}, { database: { ...db, close: () => Promise.resolve() } });
  org = await createGroup(a.admin, 'requests-org');
  team = await createGroup(a.admin, 'team', org);
  target = await createIdentity(a.admin, team, 'deploy-bot');
  reader = await createRole(a.admin, org, 'reader', ['groups.list', 'identity.list']);
  // A requester must see the role it asks for (a custom role: roles.list).
  const looker = await createRole(a.admin, org, 'looker', ['groups.list', 'roles.list']);
  const granter = await createRole(a.admin, org, 'granter', [
    'groups.list',
    'identity.list',
    'roles.list',
    'role_bindings.create',
  ]);
  // May create bindings, but not of `reader`: it lacks identity.list.
  const weak = await createRole(a.admin, org, 'weak', [
    'groups.list',
    'roles.list',
    'role_bindings.create',
  ]);
  const people: Array<[string, string]> = [
    ['requester', looker],
    ['other', looker],
    ['outsider', looker],
    ['a1', granter],
    ['a2', granter],
    ['a3', granter],
    ['weak', weak],
  ];
  for (const [name, role] of people) {
    ids[name] = await createIdentity(a.admin, org, name);
    await createBinding(a.admin, org, ids[name]!, role);
    // Each worker signs with its own keys (separate data directories).
    for (const [s, key] of [
      [a, name],
      [b, `${name}@b`],
    ] as const) {
      const token = (await s.arbor.tokens.sign(ids[name]!, { iss: ISSUER, sub: `sub-${name}` }))
        .token;
      on[key] = s.client(token);
    }
  }
  // The organization requires two approvals; the team inherits it.
  const policy = await a.admin.post(`${R}:setPolicy`, { groupUid: org, approvals: 2 });
  if (policy.status !== 200) throw new Error(JSON.stringify(policy.body));
});
test.after.always(async () => {
  await b?.close();
  await a?.close();
});

/** Resolves once the wall clock has reached `at`. */
async function until(at: number): Promise<void> {
  while (Date.now() < at) await new Promise((r) => setTimeout(r, Math.min(20, at - Date.now())));
}

/** The PreconditionFailure's violation type of a FAILED_PRECONDITION body. */
const reason = (body: any): string | undefined =>
  (body?.details ?? []).find((d: any) => d['@type']?.endsWith('PreconditionFailure'))
    ?.violations?.[0]?.type;

async function ask(who: string, extra: Record<string, unknown> = {}): Promise<any> {
  const res = await on[who]!.post(`${R}/${team}`, {
    roleUid: reader,
    durationSeconds: 3600,
    reason: 'incident 42',
    ...extra,
  });
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

test.serial(
  'request → two approvals → use → denied 1 ms after it ends, on both workers',
  async (t) => {
    const use = (who: string) => on[who]!.get(`/iam/v2beta1/identities/${target}`);
    t.is((await use('requester')).status, 404, 'no access before the request');
    // Server-owned fields in the body are not taken.
    const made = await ask('requester', {
      durationSeconds: 3,
      requesterUid: ids.a1,
      state: 'APPROVED',
      approvalsRequired: 1,
      bindingUid: `${team}/0000000000000001`,
    });
    t.is(made.requesterUid, ids.requester);
    t.is(made.state, 'PENDING');
    t.is(made.approvalsRequired, 2);
    t.is(made.bindingUid, undefined);
    t.deepEqual(made.approvals, []);

    const self = await on.requester!.post(`${R}:approve`, { uid: made.uid });
    t.is(self.status, 403, 'nobody approves their own request');
    const weak = await on.weak!.post(`${R}:approve`, { uid: made.uid });
    t.is(weak.status, 403, 'an approver who cannot create the binding cannot approve');
    t.regex(weak.body.message, /must be able to create this binding/);

    const first = await on.a1!.post(`${R}:approve`, { uid: made.uid, reason: 'ok' });
    t.is(first.status, 200);
    t.is(first.body.state, 'PENDING', 'one of two');
    t.is(first.body.approvals.length, 1);
    const twice = await on.a1!.post(`${R}:approve`, { uid: made.uid });
    t.is(twice.status, 400);
    t.is(reason(twice.body), 'ALREADY_APPROVED', 'the same approver does not count twice');
    t.is((await use('requester')).status, 404, 'still nothing after one approval');

    const second = await on.a2!.post(`${R}:approve`, { uid: made.uid });
    t.is(second.status, 200);
    t.is(second.body.state, 'APPROVED');
    t.truthy(second.body.bindingUid);
    const binding = await a.admin.get(`/iam/v2beta1/roleBindings/${second.body.bindingUid}`);
    t.is(binding.body.identity.uid, ids.requester);
    t.is(binding.body.role.uid, reader);
    const endAt = Date.parse(binding.body.expireTime);
    const approvedAt = Date.parse(second.body.updateTime);
    t.true(Math.abs(endAt - approvedAt - 3_000) < 1_000, 'expires durationSeconds after approval');

    // Use: granted on both workers (b learns of the binding within its staleness bound).
    t.is((await use('requester')).status, 200);
    const deadline = Date.now() + 2_000;
    while ((await use('requester@b')).status !== 200) {
      if (Date.now() > deadline) return t.fail('worker b never granted');
    }
    const late = await on.a3!.post(`${R}:approve`, { uid: made.uid });
    t.is(reason(late.body), 'REQUEST_CLOSED');

    await until(endAt + 1);
    t.is((await use('requester')).status, 404, 'denied 1 ms after it ends (a)');
    t.is((await use('requester@b')).status, 404, 'denied 1 ms after it ends (b)');

    // Every step is an audit record and so a CloudEvent.
    const trail = await a.admin.get(`/audit/v2beta1/events?resource_uid=${made.uid}`);
    const types = (trail.body.events as any[]).map((e) => `${e.eventType} ${e.after?.state}`);
    t.deepEqual(types.sort(), [
      'dev.arbor.iam.access_request.created.v1 PENDING',
      'dev.arbor.iam.access_request.updated.v1 APPROVED',
      'dev.arbor.iam.access_request.updated.v1 PENDING',
    ]);
    const made2 = await a.admin.get(
      `/audit/v2beta1/events?resource_uid=${second.body.bindingUid}&operation=create`,
    );
    t.is(made2.body.events[0].actor, `identity:${ids.a2}`, 'the final approver made the binding');
  },
);

test.serial(
  'deny, cancel and timeout close a request; a closed one takes nothing more',
  async (t) => {
    const denied = await ask('requester');
    t.is((await on.requester!.post(`${R}:deny`, { uid: denied.uid })).status, 403);
    const no = await on.a1!.post(`${R}:deny`, { uid: denied.uid, reason: 'not now' });
    t.is(no.body.state, 'DENIED');
    t.is(no.body.closedBy, ids.a1);
    t.is(no.body.closeReason, 'not now');
    t.is(reason((await on.a2!.post(`${R}:approve`, { uid: denied.uid })).body), 'REQUEST_CLOSED');

    const cancelled = await ask('requester');
    t.is((await on.a1!.post(`${R}:cancel`, { uid: cancelled.uid })).status, 403);
    const gone = await on.requester!.post(`${R}:cancel`, { uid: cancelled.uid });
    t.is(gone.body.state, 'CANCELLED');

    const waiting = await ask('requester');
    await db
      .knex('access_requests')
      .where({ uid: waiting.uid })
      .update({ timeout_time: new Date(Date.now() - 1_000) });
    const timedOut = await on.a1!.post(`${R}:approve`, { uid: waiting.uid });
    t.is(reason(timedOut.body), 'REQUEST_TIMED_OUT');
    t.true((await a.arbor.services.accessRequests.closeTimedOut()) >= 1);
    const closed = await on.requester!.get(`${R}/${waiting.uid}`);
    t.is(closed.body.state, 'EXPIRED');
    const trail = await a.admin.get(`/audit/v2beta1/events?resource_uid=${waiting.uid}`);
    t.true(
      (trail.body.events as any[]).some(
        (e) => e.actor === 'system:access-request-timeout' && e.after.state === 'EXPIRED',
      ),
    );
  },
);

test.serial('a request is seen by its requester and the approvers only', async (t) => {
  const mine = await ask('requester');
  for (const who of ['other', 'outsider']) {
    t.is((await on[who]!.get(`${R}/${mine.uid}`)).status, 404, `${who}: get`);
    t.is((await on[who]!.post(`${R}:approve`, { uid: mine.uid })).status, 404, `${who}: approve`);
    t.is((await on[who]!.post(`${R}:cancel`, { uid: mine.uid })).status, 404, `${who}: cancel`);
    const listed = await on[who]!.get(R);
    t.is(listed.status, 200);
    t.false(JSON.stringify(listed.body).includes(mine.uid), `${who}: list`);
  }
  // The other requester sees its own request, and only that.
  const theirs = await ask('other');
  const own = await on.other!.get(R);
  t.deepEqual(
    (own.body.accessRequests as any[]).map((r) => r.uid),
    [theirs.uid],
  );
  // An approver's inbox: pending requests at its groups.
  const inbox = await on.a1!.get(`${R}?state=PENDING`);
  const uids = (inbox.body.accessRequests as any[]).map((r) => r.uid);
  t.true(uids.includes(mine.uid) && uids.includes(theirs.uid));
  t.is(inbox.body.totalCount, String(uids.length));
  // The admin token may decide but never asks: requests are an identity's.
  const admin = await a.admin.post(`${R}/${team}`, {
    roleUid: reader,
    durationSeconds: 60,
    reason: 'x',
  });
  t.is(admin.status, 400);
  // Requests never reach beyond the caller's sight: a group it cannot list is NOT_FOUND.
  const hidden = await createGroup(a.admin, 'hidden-org');
  const nowhere = await on.requester!.post(`${R}/${hidden}`, {
    roleUid: reader,
    durationSeconds: 60,
    reason: 'x',
  });
  t.is(nowhere.status, 404);
  // One pending request per role and group: withdraw both for the tests that follow.
  for (const [who, r] of [
    ['requester', mine],
    ['other', theirs],
  ] as const)
    t.is((await on[who]!.post(`${R}:cancel`, { uid: r.uid })).status, 200);
});

test.serial('a scheduled request: the binding starts at notBefore', async (t) => {
  const startAt = Date.now() + 60_000;
  const r = await ask('other', { notBefore: new Date(startAt).toISOString(), durationSeconds: 60 });
  await on.a1!.post(`${R}:approve`, { uid: r.uid });
  const done = await on.a2!.post(`${R}:approve`, { uid: r.uid });
  t.is(done.body.state, 'APPROVED');
  const binding = await a.admin.get(`/iam/v2beta1/roleBindings/${done.body.bindingUid}`);
  t.is(Date.parse(binding.body.notBefore), startAt);
  t.is(Date.parse(binding.body.expireTime), startAt + 60_000);
  t.true(binding.body.pending);
  t.is((await on.other!.get(`/iam/v2beta1/identities/${target}`)).status, 404, 'not yet');
});

test.serial(
  'an approver who asks cannot approve its own request, though it could bind',
  async (t) => {
    // a1 could create this binding itself; asking, it still needs two others.
    const own = await ask('a1');
    const self = await on.a1!.post(`${R}:approve`, { uid: own.uid });
    t.is(self.status, 403);
    t.regex(self.body.message, /own request/);
    t.is((await on.a2!.post(`${R}:approve`, { uid: own.uid })).body.state, 'PENDING');
    t.is((await on.a3!.post(`${R}:approve`, { uid: own.uid })).body.state, 'APPROVED');
  },
);

test.serial(
  'a folder owner approves a request at its folder by an identity of the organization',
  async (t) => {
    // acme/platform/ci: Bob owns platform; the requester's identity lives at the organization.
    const platform = await createGroup(a.admin, 'platform', org);
    const ci = await createGroup(a.admin, 'ci', platform);
    const single = await a.admin.post(`${R}:setPolicy`, { groupUid: platform, approvals: 1 });
    t.is(single.status, 200);
    const bob = await createIdentity(a.admin, platform, 'bob');
    await createBinding(a.admin, platform, bob, await builtinRoleUid(a.admin, 'owner'));
    const asBob = a.client((await a.arbor.tokens.sign(bob, { iss: ISSUER, sub: 'sub-bob' })).token);
    t.is((await asBob.get(`/iam/v2beta1/identities/${ids.requester}`)).status, 404);

    const r = await on.requester!.post(`${R}/${ci}`, {
      roleUid: reader,
      durationSeconds: 600,
      reason: 'ci fire',
    });
    t.is(r.status, 200);
    const inbox = await asBob.get(`${R}?state=PENDING`);
    t.deepEqual(
      (inbox.body.accessRequests as any[]).map((x) => x.uid),
      [r.body.uid],
      'the inbox holds the request at its folder only',
    );
    const done = await asBob.post(`${R}:approve`, { uid: r.body.uid });
    t.is(done.status, 200, JSON.stringify(done.body));
    t.is(done.body.state, 'APPROVED');
    const binding = await a.admin.get(`/iam/v2beta1/roleBindings/${done.body.bindingUid}`);
    t.is(binding.body.identity.uid, ids.requester);
    t.is(binding.body.group.uid, ci);

    // Deciding the request showed Bob nothing else: the requester, and any other identity
    // of the organization, are still out of its sight. The requester now holds a binding
    // Bob sees at its folder, so Bob may bind it there directly (by uid); any other
    // identity of the organization stays out of its direct binds.
    t.is((await asBob.get(`/iam/v2beta1/identities/${ids.requester}`)).status, 404);
    t.is((await asBob.get(`/iam/v2beta1/identities/${ids.other}`)).status, 404);
    const listed = await asBob.get(`/iam/v2beta1/identities?uidp.descendants_of=${org}`);
    t.false(JSON.stringify(listed.body).includes(ids.other!));
    const viewer = await builtinRoleUid(a.admin, 'viewer');
    const other = await asBob.post(`/iam/v2beta1/roleBindings/${ci}`, {
      identityUid: ids.other,
      roleUid: viewer,
    });
    t.is(other.status, 400);
    t.regex(other.body.message, /identity not found/);
    const direct = await asBob.post(`/iam/v2beta1/roleBindings/${ci}`, {
      identityUid: ids.requester,
      roleUid: viewer,
    });
    t.is(direct.status, 200, JSON.stringify(direct.body));
    t.is(direct.body.identity.name, '', 'by uid: nothing else about it shows');
    t.is((await asBob.get(`/iam/v2beta1/identities/${ids.requester}`)).status, 404);
    // Nor does it decide requests elsewhere: one at the organization stays out of its inbox.
    const above = await ask('other');
    t.is((await asBob.post(`${R}:approve`, { uid: above.uid })).status, 404);
    await on.other!.post(`${R}:cancel`, { uid: above.uid });
  },
);
