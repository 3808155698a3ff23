import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { startServer, type Client, type TestServer } from '../helpers/server.js';

/**
 * Who-can answers a caller with everything it could list
 * itself, whole (holders whose bindings it may list, by uid, even when it may not list the
 * identities), and a page token carries its count only to a caller with the same view.
 */
const WHO = '/iam/v2beta1/access:whoCan';
let s: TestServer;
let org: string;
let folder: string;
let owner: string;
let asOwner: Client;
const holders: string[] = [];

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'views-org');
  folder = await createGroup(s.admin, 'views-folder', org);
  await createGroup(s.admin, 'views-other', org);
  const [ownerRole, viewer] = [
    await builtinRoleUid(s.admin, 'owner'),
    await builtinRoleUid(s.admin, 'viewer'),
  ];
  // Every identity lives at the organization: the folder's owner may list none of them.
  owner = await createIdentity(s.admin, org, 'folder-owner');
  await createBinding(s.admin, folder, owner, ownerRole);
  for (const name of ['holder-a', 'holder-b']) {
    const uid = await createIdentity(s.admin, org, name);
    await createBinding(s.admin, folder, uid, viewer);
    holders.push(uid);
  }
  // Bound above the folder: a binding the folder's owner cannot list, so not its to know.
  const top = await createIdentity(s.admin, org, 'org-viewer');
  await createBinding(s.admin, org, top, viewer);
  asOwner = s.client(
    (await s.arbor.tokens.sign(owner, { iss: ISSUER, sub: 'sub-folder-owner' })).token,
  );
});
test.after.always(async () => {
  await s?.close();
});

const uidsOf = (body: any): string[] =>
  (body.identities as Array<{ identityUid: string }>).map((h) => h.identityUid).sort();

test('who-can shows a folder owner every holder whose binding it can list, by uid, and counts them all', async (t) => {
  const listed = await asOwner.get(`/iam/v2beta1/roleBindings?uidp.children_of=${folder}`);
  t.is(listed.status, 200);
  const known = [
    ...new Set((listed.body.roleBindings as any[]).map((b) => b.identity.uid as string)),
  ].sort();
  t.deepEqual(known, [owner, ...holders].sort(), 'listing the bindings shows three holders');
  // It cannot list those identities themselves.
  t.is((await asOwner.get(`/iam/v2beta1/identities/${holders[0]}`)).status, 404);

  const who = await asOwner.get(`${WHO}?group=${folder}&capability=repo.list`);
  t.is(who.status, 200, JSON.stringify(who.body));
  t.deepEqual(uidsOf(who.body), known);
  t.is(who.body.totalCount, '3');
  for (const h of who.body.identities) t.true(h.grants.length > 0);

  // The admin also sees the holder bound above the folder.
  const all = await s.admin.get(`${WHO}?group=${folder}&capability=repo.list`);
  t.is(all.body.totalCount, '4');
});

test('a who-can page token replayed by another caller carries not the first caller’s count', async (t) => {
  const first = await s.admin.get(`${WHO}?group=${folder}&capability=repo.list&page_size=1`);
  t.is(first.body.totalCount, '4');
  const token = encodeURIComponent(first.body.nextPageToken);
  const replay = await asOwner.get(
    `${WHO}?group=${folder}&capability=repo.list&page_size=1&page_token=${token}`,
  );
  t.is(replay.status, 200, JSON.stringify(replay.body));
  t.is(replay.body.totalCount, '3', 'counted for the view of the caller that sent it');
  // The admin's own chain keeps its count.
  const next = await s.admin.get(
    `${WHO}?group=${folder}&capability=repo.list&page_size=1&page_token=${token}`,
  );
  t.is(next.body.totalCount, '4');
});

test('any list: a page token replayed by a caller who sees less is counted for that caller', async (t) => {
  const q = `/iam/v2beta1/groups?uidp.descendants_of=${org}&page_size=1`;
  const first = await s.admin.get(q);
  t.is(first.body.totalCount, '2');
  const token = encodeURIComponent(first.body.nextPageToken);
  const replay = await asOwner.get(`${q}&page_token=${token}`);
  t.is(replay.status, 200, JSON.stringify(replay.body));
  t.is(replay.body.totalCount, '1');
  t.is((await asOwner.get(q)).body.totalCount, '1');
});
