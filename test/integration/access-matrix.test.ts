import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { startServer, type Client, type TestServer } from '../helpers/server.js';

/**
 * Every route family × every kind of caller: who may do what, and that lists and
 * counts show exactly the visible set. Identity callers hold real API tokens signed by
 * the server's own issuer, as the STS would give them.
 */
let s: TestServer;
let org: string;
let folder: string;
let other: string;
let repoInOrg: string;
let repoInOther: string;
const callers: Record<string, Client> = {};
const roleUid: Record<string, string> = {};

async function tokenFor(identity: string): Promise<string> {
  return (await s.arbor.tokens.sign(identity, { iss: 'https://test.invalid', sub: identity }))
    .token;
}

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'matrix-org');
  folder = await createGroup(s.admin, 'matrix-folder', org);
  other = await createGroup(s.admin, 'matrix-other');
  for (const r of (await s.admin.get('/iam/v2beta1/roles?page_size=200')).body.roles)
    roleUid[r.name] = r.uid;
  repoInOrg = (await s.admin.post(`/registry/v2beta1/repos/${folder}`, { name: 'app' })).body.uid;
  repoInOther = (await s.admin.post(`/registry/v2beta1/repos/${other}`, { name: 'theirs' })).body
    .uid;
  const who: Array<[string, string, string]> = [
    ['owner@org', org, 'owner'],
    ['editor@org', org, 'editor'],
    ['viewer@org', org, 'viewer'],
    ['viewer@folder', folder, 'viewer'],
    ['viewer@other', other, 'viewer'],
  ];
  for (const [name, at, role] of who) {
    const home = at === other ? other : org;
    const id = await createIdentity(s.admin, home, name.replace('@', '-at-'));
    await createBinding(s.admin, at, id, roleUid[role]!);
    callers[name] = s.client(await tokenFor(id));
  }
  callers.admin = s.admin;
  callers.anonymous = s.client();
});
test.after.always(async () => {
  await s?.close();
});

const uids = (items: Array<{ uid: string }>) => items.map((i) => i.uid).sort();

test.serial('matrix: group lists and counts show exactly the visible subtree', async (t) => {
  const expect: Record<string, string[]> = {
    'owner@org': [org, folder],
    'viewer@org': [org, folder],
    'viewer@folder': [folder],
    'viewer@other': [other],
  };
  for (const [name, want] of Object.entries(expect)) {
    const res = await callers[name]!.get('/iam/v2beta1/groups');
    t.is(res.status, 200, name);
    t.deepEqual(uids(res.body.groups), [...want].sort(), name);
    t.is(res.body.totalCount, String(want.length), name);
  }
  t.is((await callers.anonymous!.get('/iam/v2beta1/groups')).status, 401);
});

test.serial('matrix: get answers NOT_FOUND for what the caller cannot see', async (t) => {
  const cases: Array<[string, string, number]> = [
    ['viewer@org', folder, 200],
    ['viewer@folder', folder, 200],
    ['viewer@folder', org, 404],
    ['viewer@other', org, 404],
    ['viewer@other', folder, 404],
    ['admin', folder, 200],
  ];
  for (const [name, uid, status] of cases) {
    t.is(
      (await callers[name]!.get(`/iam/v2beta1/groups/${uid}`)).status,
      status,
      `${name} GET ${uid}`,
    );
  }
  // Invisible and missing look the same.
  const hidden = await callers['viewer@other']!.get(`/iam/v2beta1/groups/${org}`);
  const missing = await callers['viewer@other']!.get(`/iam/v2beta1/groups/${'c'.repeat(40)}`);
  t.is(hidden.body.code, missing.body.code);
});

test.serial(
  'matrix: writes need the capability at the group, and visible-but-denied is 403',
  async (t) => {
    const cases: Array<[string, number]> = [
      ['owner@org', 200],
      ['editor@org', 403],
      ['viewer@org', 403],
      ['viewer@folder', 404],
      ['viewer@other', 404],
      ['anonymous', 401],
    ];
    for (const [name, status] of cases) {
      const res = await callers[name]!.post(`/iam/v2beta1/groups/${org}`, {
        name: `by-${name.replace('@', '-')}`,
      });
      t.is(res.status, status, `${name} creates a folder`);
    }
    for (const name of ['owner@org', 'editor@org', 'viewer@org', 'viewer@folder']) {
      t.is(
        (await callers[name]!.post('/iam/v2beta1/groups', { name: 'new-root' })).status,
        403,
        `${name} creates a root`,
      );
    }
    t.is(
      (await callers['viewer@org']!.patch(`/iam/v2beta1/groups/${folder}`, { description: 'x' }))
        .status,
      403,
    );
    t.is(
      (await callers['owner@org']!.patch(`/iam/v2beta1/groups/${folder}`, { description: 'x' }))
        .status,
      200,
    );
    t.is((await callers['viewer@org']!.delete(`/iam/v2beta1/groups/${folder}`)).status, 403);
  },
);

test.serial('matrix: identities and role bindings follow the same rules', async (t) => {
  t.is(
    (
      await callers['owner@org']!.post(`/iam/v2beta1/identities/${folder}`, {
        name: 'ci',
        claimMatch: { issuer: 'https://a.example', subject: 's' },
      })
    ).status,
    200,
  );
  t.is(
    (
      await callers['editor@org']!.post(`/iam/v2beta1/identities/${folder}`, {
        name: 'ci2',
        claimMatch: { issuer: 'https://a.example', subject: 's' },
      })
    ).status,
    403,
  );
  const ids = await callers['viewer@folder']!.get('/iam/v2beta1/identities');
  t.true(ids.body.identities.every((i: { uid: string }) => i.uid.startsWith(`${folder}/`)));
  const otherIds = await callers['viewer@other']!.get('/iam/v2beta1/identities');
  t.true(otherIds.body.identities.every((i: { uid: string }) => i.uid.startsWith(`${other}/`)));
  const bindings = await callers['viewer@other']!.get('/iam/v2beta1/roleBindings');
  t.true(bindings.body.roleBindings.every((b: { uid: string }) => b.uid.startsWith(`${other}/`)));
  // Escalation: a viewer cannot bind itself a stronger role.
  const self = (await callers['viewer@org']!.get('/iam/v2beta1/identities?name=viewer-at-org')).body
    .identities[0]?.uid;
  const escalate = await callers['viewer@org']!.post(`/iam/v2beta1/roleBindings/${org}`, {
    identityUid: self,
    roleUid: roleUid.owner,
  });
  t.is(escalate.status, 403);
});

test.serial('matrix: registry visibility follows the tree', async (t) => {
  const mine = await callers['viewer@folder']!.get('/registry/v2beta1/repos');
  t.deepEqual(uids(mine.body.repos), [repoInOrg]);
  t.is(mine.body.totalCount, '1');
  t.is((await callers['viewer@folder']!.get(`/registry/v2beta1/repos/${repoInOther}`)).status, 404);
  t.is(
    (await callers['viewer@org']!.post(`/registry/v2beta1/repos/${org}`, { name: 'pushed' }))
      .status,
    403,
  );
  t.is(
    (await callers['editor@org']!.post(`/registry/v2beta1/repos/${org}`, { name: 'pushed' }))
      .status,
    200,
  );
});

test.serial(
  'matrix: roles are listable by everyone authenticated and include the built-ins',
  async (t) => {
    const res = await callers['viewer@folder']!.get('/iam/v2beta1/roles');
    t.is(res.status, 200);
    for (const name of ['viewer', 'editor', 'owner', 'registry.pull', 'registry.push']) {
      t.true(
        res.body.roles.some((r: { name: string }) => r.name === name),
        name,
      );
    }
  },
);
