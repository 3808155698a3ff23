import test from 'ava';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { createGroup } from '../helpers/fixtures.js';
import {
  ISSUER,
  createBinding,
  createIdentity,
  createRole,
  violations,
} from '../helpers/iam-fixtures.js';
import { startServer, type Client, type TestServer } from '../helpers/server.js';

/**
 * access:simulate with delegation policies, over REST: `setDelegationPolicy` (as
 * identities:setDelegationPolicy takes it), and identity and group deletes that take a
 * policy with them, answer who gains, loses or keeps with another cap the ability to act for
 * whom. Only a caller that may read the policy (list and update the identity) sees it.
 */
let s: TestServer;
let org: string;
let folder: string;
let alice: string;
let bob: string;
let carol: string;
let looker: Client;
let keeper: Client;
const SIM = '/iam/v2beta1/access:simulate';
const SET = '/iam/v2beta1/identities:setDelegationPolicy';

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'deleg-org');
  folder = await createGroup(s.admin, 'folder', org);
  alice = await createIdentity(s.admin, folder, 'alice');
  bob = await createIdentity(s.admin, org, 'bob');
  carol = await createIdentity(s.admin, org, 'carol');
  const set = await s.admin.post(SET, {
    identityUid: alice,
    actors: [bob],
    capabilities: ['repo.list'],
    maxLifetimeSeconds: 900,
  });
  if (set.status !== 200) throw new Error(JSON.stringify(set.body));
  // looker may list identities, not update them; keeper may do both, in the folder only.
  const sign = async (name: string, caps: string[]) => {
    const id = await createIdentity(s.admin, org, name);
    await createBinding(s.admin, folder, id, await createRole(s.admin, org, name, caps));
    await createBinding(
      s.admin,
      org,
      id,
      await createRole(s.admin, org, `${name}-groups`, ['groups.list']),
    );
    return s.client((await s.arbor.tokens.sign(id, { iss: ISSUER, sub: `sub-${name}` })).token);
  };
  looker = await sign('looker', ['identity.list']);
  keeper = await sign('keeper', ['identity.list', 'identity.update']);
});
test.after.always(async () => {
  await s?.close();
});

const policy = (actors: string[], extra: object = {}) => ({
  setDelegationPolicy: { identityUid: alice, actors, ...extra },
});

const words = (body: any): string[] =>
  body.delegationDeltas.map((d: any) => `${d.actor.name} ${d.effect} for ${d.subject.name}`);

test('a new actor gains, a kept one changes cap, with names and what each may', async (t) => {
  const res = await s.admin.post(SIM, {
    changes: [policy([carol, bob], { capabilities: ['repo.list', 'groups.list'] })],
  });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body.changes, [{ index: 0, applied: true, permitted: true }]);
  t.deepEqual(res.body.deltas, []);
  const byActor = new Map(res.body.delegationDeltas.map((d: any) => [d.actor.uid, d]));
  t.deepEqual(byActor.get(bob), {
    subject: { uid: alice, name: 'alice', path: 'deleg-org/folder/alice' },
    actor: { uid: bob, name: 'bob', path: 'deleg-org/bob' },
    effect: 'CHANGE',
    before: { capabilities: ['repo.list'], maxLifetimeSeconds: 900 },
    // As the real set stores it: sorted, and the default lifetime when none is given.
    after: { capabilities: ['groups.list', 'repo.list'], maxLifetimeSeconds: 3600 },
  });
  t.deepEqual(byActor.get(carol), {
    subject: { uid: alice, name: 'alice', path: 'deleg-org/folder/alice' },
    actor: { uid: carol, name: 'carol', path: 'deleg-org/carol' },
    effect: 'GAIN',
    after: { capabilities: ['groups.list', 'repo.list'], maxLifetimeSeconds: 3600 },
  });
  t.is(res.body.totalCount, '2');
  // The same policy again changes nothing.
  const same = await s.admin.post(SIM, {
    changes: [policy([bob], { capabilities: ['repo.list'], maxLifetimeSeconds: 900 })],
  });
  t.deepEqual(same.body.delegationDeltas, []);
});

test('clearing, deleting the identity or its group: its actors lose', async (t) => {
  for (const change of [
    policy([]),
    { deleteIdentity: { uid: alice } },
    { deleteGroup: { uid: folder } },
  ]) {
    const res = await s.admin.post(SIM, { changes: [change] });
    t.is(res.status, 200, JSON.stringify(res.body));
    t.deepEqual(words(res.body), ['bob LOSE for alice'], JSON.stringify(change));
    t.deepEqual(res.body.delegationDeltas[0].before, {
      capabilities: ['repo.list'],
      maxLifetimeSeconds: 900,
    });
  }
  // A policy set then removed in the same set is what it was removed from.
  const net = await s.admin.post(SIM, {
    changes: [policy([carol], { capabilities: ['repo.list'] }), { deleteIdentity: { uid: alice } }],
  });
  t.deepEqual(words(net.body), ['bob LOSE for alice']);
  // Clearing what is not there does not apply, as the real call's NOT_FOUND.
  const none = await s.admin.post(SIM, {
    changes: [{ setDelegationPolicy: { identityUid: carol, actors: [] } }],
  });
  t.deepEqual(none.body.changes, [
    { index: 0, applied: false, permitted: false, reason: 'delegation policy not found' },
  ]);
});

test('delegation entries page after the access entries, one cursor, one total', async (t) => {
  const viewer = builtinRoleUid('viewer');
  const changes = [
    { createRoleBinding: { groupUid: folder, identityUid: carol, roleUid: viewer } },
    policy([]),
  ];
  const first = await s.admin.post(SIM, { changes, pageSize: 1 });
  t.is(first.status, 200, JSON.stringify(first.body));
  t.is(first.body.totalCount, '2');
  t.is(first.body.deltas.length, 1);
  t.deepEqual(first.body.delegationDeltas, []);
  const second = await s.admin.post(SIM, {
    changes,
    pageSize: 1,
    pageToken: first.body.nextPageToken,
  });
  t.deepEqual(second.body.deltas, []);
  t.deepEqual(words(second.body), ['bob LOSE for alice']);
  t.is(second.body.nextPageToken, undefined);
});

test('a caller that may list but not update the identity learns nothing of its policy', async (t) => {
  const res = await looker.post(SIM, { changes: [policy([])] });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body.changes, [
    {
      index: 0,
      applied: false,
      permitted: false,
      reason: "the caller may not read this identity's delegation policy (identity.update)",
    },
  ]);
  t.deepEqual(res.body.delegationDeltas, []);
  // Deleting it is simulated (not permitted), and still shows no policy.
  const del = await looker.post(SIM, { changes: [{ deleteIdentity: { uid: alice } }] });
  t.like(del.body.changes[0], { applied: true, permitted: false });
  t.deepEqual(del.body.delegationDeltas, []);
  // Whoever may update it sees it, and may make the change.
  const kept = await keeper.post(SIM, { changes: [policy([])] });
  t.deepEqual(kept.body.changes, [{ index: 0, applied: true, permitted: true }]);
  // bob is outside keeper's folder: named by uid only.
  t.like(kept.body.delegationDeltas, [
    {
      subject: { uid: alice, name: 'alice' },
      actor: { uid: bob, name: '', path: '' },
      effect: 'LOSE',
    },
  ]);
});

test('a policy change is checked as the real set checks it', async (t) => {
  const self = await s.admin.post(SIM, {
    changes: [policy([alice], { capabilities: ['repo.list'] })],
  });
  t.is(self.status, 400);
  t.deepEqual(violations(self.body), [
    'changes.0.setDelegationPolicy.actors: an identity does not act for itself',
  ]);
  const noCaps = await s.admin.post(SIM, { changes: [policy([bob])] });
  t.is(noCaps.status, 400);
  t.deepEqual(violations(noCaps.body), [
    'changes.0.setDelegationPolicy.capabilities: at least one capability is required',
  ]);
});

test('a caller that cannot list the identity learns nothing: its answer is a missing uid’s', async (t) => {
  const elsewhere = await createGroup(s.admin, 'elsewhere');
  const outsiderUid = await createIdentity(s.admin, elsewhere, 'outsider');
  await createBinding(s.admin, elsewhere, outsiderUid, builtinRoleUid('owner'));
  const outsider = s.client(
    (await s.arbor.tokens.sign(outsiderUid, { iss: ISSUER, sub: 'sub-outsider' })).token,
  );
  const missing = `${folder}/00000000000000ab`;
  for (const change of [{ actors: [] }, { actors: [outsiderUid], capabilities: ['repo.list'] }]) {
    const hidden = await outsider.post(SIM, {
      changes: [{ setDelegationPolicy: { identityUid: alice, ...change } }],
    });
    const none = await outsider.post(SIM, {
      changes: [{ setDelegationPolicy: { identityUid: missing, ...change } }],
    });
    t.is(hidden.status, 200, JSON.stringify(hidden.body));
    t.deepEqual(hidden.body, none.body);
    t.deepEqual(hidden.body.changes, [
      { index: 0, applied: false, permitted: false, reason: 'identity not found' },
    ]);
  }
  const gone = await outsider.post(SIM, { changes: [{ deleteGroup: { uid: folder } }] });
  t.deepEqual(gone.body.delegationDeltas, []);
  t.deepEqual(gone.body.deltas, []);
});
