import test from 'ava';
import { NAME_SHAPE_ERROR } from '../../src/resources/validate.js';
import { createGroup } from '../helpers/fixtures.js';
import { createIdentity, violations } from '../helpers/iam-fixtures.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

// A name only dots make reads as "here" or "up" in a path of names, and a space at either
// end is invisible: both are refused for every name written, for every kind alike, while a
// name stored before stays as it is and resolves only spelled exactly.
let db: TestDatabase;
let s: TestServer;
let org: string;
const BAD = ['.', '..', '...', ' team', 'team ', ' '];

test.before(async () => {
  db = await freshDatabase();
  s = await startServer({}, { database: db });
  org = await createGroup(s.admin, 'names-org');
});
test.after.always(async () => {
  await s?.close();
});

const refused = (body: unknown) => violations(body).includes(`name: ${NAME_SHAPE_ERROR}`);

test('names: a group, an identity or a role named only by dots or with outer spaces is refused', async (t) => {
  for (const name of BAD) {
    const group = await s.admin.post(`/iam/v2beta1/groups/${org}`, { name });
    t.is(group.status, 400, `group ${JSON.stringify(name)}`);
    t.true(refused(group.body), JSON.stringify(group.body));
    const identity = await s.admin.post(`/iam/v2beta1/identities/${org}`, {
      name,
      claimMatch: { issuer: 'https://issuer.example.com', subject: 'x' },
    });
    t.is(identity.status, 400, `identity ${JSON.stringify(name)}`);
    t.true(refused(identity.body), JSON.stringify(identity.body));
    const role = await s.admin.post(`/iam/v2beta1/roles/${org}`, {
      name,
      capabilities: ['groups.list'],
    });
    t.is(role.status, 400, `role ${JSON.stringify(name)}`);
    t.true(refused(role.body), JSON.stringify(role.body));
  }
  const root = await s.admin.post('/iam/v2beta1/groups', { name: '..' });
  t.is(root.status, 400);
  t.true(refused(root.body));
});

test('names: dots inside a name and inner spaces are still names', async (t) => {
  for (const name of ['v1.2', '.hidden', 'a..b', 'my team', 'end.']) {
    const res = await s.admin.post(`/iam/v2beta1/groups/${org}`, { name });
    t.is(res.status, 200, `${JSON.stringify(name)}: ${JSON.stringify(res.body)}`);
  }
});

test('names: renaming to such a name is refused', async (t) => {
  const uid = await createGroup(s.admin, 'renamed', org);
  const res = await s.admin.patch(`/iam/v2beta1/groups/${uid}?update_mask=name`, { name: '..' });
  t.is(res.status, 400);
  t.true(refused(res.body));
});

test('names: a row stored before keeps its name, resolves only spelled exactly, and updates', async (t) => {
  const uid = await createGroup(s.admin, 'legacy', org);
  await db.knex('groups').where({ uid }).update({ name: '..' });
  const bot = await createIdentity(s.admin, uid, 'bot');
  await db.knex('identities').where({ uid: bot }).update({ name: ' bot' });
  const got = await s.admin.get(`/iam/v2beta1/groups/${uid}`);
  t.is(got.status, 200);
  t.is(got.body.name, '..');
  // A segment is a name, never "up": `names-org/..` is the group named `..`, not the root.
  const resolved = await s.admin.get(
    `/iam/v2beta1/groups:resolve?path=${encodeURIComponent('names-org/..')}`,
  );
  t.is(resolved.status, 200);
  t.is(resolved.body.uid, uid);
  const exact = await s.admin.get(
    `/iam/v2beta1/identities:resolve?path=${encodeURIComponent('names-org/../ bot')}`,
  );
  t.is(exact.status, 200);
  t.is(exact.body.uid, bot);
  // No trimming: the spelling without the space is another name, and there is none.
  const trimmed = await s.admin.get(
    `/iam/v2beta1/identities:resolve?path=${encodeURIComponent('names-org/../bot')}`,
  );
  t.is(trimmed.status, 404);
  // An update that leaves the name alone is untouched by the rule.
  const patched = await s.admin.patch(`/iam/v2beta1/groups/${uid}?update_mask=description`, {
    description: 'kept',
  });
  t.is(patched.status, 200, JSON.stringify(patched.body));
  t.is(patched.body.name, '..');
});
