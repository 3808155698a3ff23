import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * A group that was deleted (or never was) is NOT_FOUND to check and who-can, as to a Get,
 * never answered from the bindings above where it used to be, to a caller who may list
 * groups there; one who may not is answered about itself as at any group it cannot see.
 */
let s: TestServer;
let org: string;
let gone: string;
let alice: string;
let bob: string;
const A = '/iam/v2beta1/access';

const tokenFor = async (uid: string) =>
  (await s.arbor.tokens.sign(uid, { iss: ISSUER, sub: `sub-${uid}` })).token;

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'deleted-org');
  gone = await createGroup(s.admin, 'soon-gone', org);
  alice = await createIdentity(s.admin, org, 'alice');
  bob = await createIdentity(s.admin, org, 'bob');
  const reader = await createRole(s.admin, org, 'reader', ['groups.list', 'identity.list']);
  // bob holds repo.list above the group, and no groups.list: he cannot list groups there.
  const puller = await createRole(s.admin, org, 'puller', ['repo.list']);
  await createBinding(s.admin, org, alice, reader);
  await createBinding(s.admin, org, bob, puller);
  const del = await s.admin.delete(`/iam/v2beta1/groups/${gone}`);
  if (del.status !== 200) throw new Error(JSON.stringify(del.body));
});
test.after.always(async () => {
  await s?.close();
});

test('check about a deleted group: NOT_FOUND, exactly as its Get', async (t) => {
  const get = await s.admin.get(`/iam/v2beta1/groups/${gone}`);
  t.is(get.status, 404);
  const res = await s.admin.post(`${A}:check`, {
    identityUid: alice,
    capability: 'groups.list',
    groupUid: gone,
  });
  t.is(res.status, 404, JSON.stringify(res.body));
  t.deepEqual(res.body, get.body);
  const batch = await s.admin.post(`${A}:batchCheck`, {
    checks: [
      { identityUid: alice, capability: 'groups.list', groupUid: org },
      { identityUid: alice, capability: 'groups.list', groupUid: gone },
    ],
  });
  t.is(batch.status, 404);
});

test('asking about yourself at a deleted group you could list: NOT_FOUND', async (t) => {
  const me = s.client(await tokenFor(alice));
  const res = await me.post(`${A}:check`, { capability: 'groups.list', groupUid: gone });
  t.is(res.status, 404, JSON.stringify(res.body));
  t.deepEqual(res.body, (await me.get(`/iam/v2beta1/groups/${gone}`)).body);
});

test('asking about yourself where you cannot list groups: answered from your own bindings above, whether it exists or not', async (t) => {
  const me = s.client(await tokenFor(bob));
  // bob may not list groups here, so its existence is not his to learn:
  // his binding at the organization grants repo.list on its whole path, as it would.
  const res = await me.post(`${A}:check`, { capability: 'repo.list', groupUid: gone });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.true(res.body.allowed);
  t.is(res.body.grants[0].groupUid, org);
  t.deepEqual(res.body.grants[0].path, [org, gone]);
  const here = await me.post(`${A}:check`, { capability: 'repo.list', groupUid: org });
  t.true(here.body.allowed);
  const none = await me.post(`${A}:check`, { capability: 'groups.list', groupUid: gone });
  t.false(none.body.allowed);
});

test('who-can at a deleted group: NOT_FOUND', async (t) => {
  const res = await s.admin.get(`${A}:whoCan?group=${gone}&capability=groups.list`);
  t.is(res.status, 404, JSON.stringify(res.body));
});
