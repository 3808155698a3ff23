import test from 'ava';
import type { Principal } from '../../src/auth/principal.js';
import { builtinRole } from '../../src/resources/roles/builtin-roles.js';
import { createGroup } from '../helpers/fixtures.js';
import { asIdentity, createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * Resources a custom resource manages (migration 0008): the services refuse every other
 * writer — the admin token, an owner, another custom resource — with FAILED_PRECONDITION
 * naming the manager, and the manager can give them back.
 */
let s: TestServer;
let org: string;
let ownerId: string;
const G = '/iam/v2beta1/groups';
const owner = builtinRole('owner').uid;
const viewer = builtinRole('viewer').uid;

/** The reconciler, acting for a custom resource. */
const asObject = (manager: string): Principal => ({ kind: 'system', name: 'reconciler', manager });

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'managed-org');
  ownerId = await createIdentity(s.admin, org, 'owner');
  await createBinding(s.admin, org, ownerId, owner);
});
test.after.always(async () => {
  await s?.close();
});

const refusal = (manager: string) => ({
  code: 9,
  message: new RegExp(`managed by the Kubernetes object ${manager}`),
});

test('managed: REST cannot update or delete a group that an object created', async (t) => {
  const { groups } = s.arbor.services;
  const g = await groups.create(asObject('Group team-a/payments'), org, { name: 'payments' });
  for (const res of [
    await s.admin.patch(`${G}/${g.uid}`, { description: 'by hand' }),
    await s.admin.delete(`${G}/${g.uid}`),
  ]) {
    t.is(res.status, 400);
    t.is(res.body.code, 9);
    t.regex(res.body.message, /managed by the Kubernetes object Group team-a\/payments/);
  }
  const e = await t.throwsAsync(
    groups.update(asIdentity(ownerId), g.uid, { description: 'owner' }, 'description'),
  );
  t.like(e, { code: 9 });
  t.like(
    await t.throwsAsync(groups.delete(asObject('Group team-b/other'), g.uid)),
    { code: 9 },
    'nor can another object',
  );
  const mine = await groups.update(
    asObject('Group team-a/payments'),
    g.uid,
    { description: 'from git' },
    'description',
  );
  t.is(mine.description, 'from git');
  t.like((await s.admin.get(`${G}/${g.uid}`)).body, { description: 'from git' });
});

test('managed: identities and role bindings are guarded the same way', async (t) => {
  const { identities, roleBindings } = s.arbor.services;
  const by = asObject('Identity team-a/ci');
  const i = await identities.create(by, org, {
    name: 'ci',
    claimMatch: { issuer: 'https://issuer.example.com', subject: 'ci' },
  });
  const b = await roleBindings.create(asObject('RoleBinding team-a/ci'), org, {
    identityUid: i.uid,
    roleUid: viewer,
  });
  const ipatch = await s.admin.patch(`/iam/v2beta1/identities/${i.uid}`, { description: 'x' });
  t.like(ipatch, { status: 400, body: { code: 9 } });
  t.regex(ipatch.body.message, refusal('Identity team-a/ci').message);
  const bdel = await s.admin.delete(`/iam/v2beta1/roleBindings/${b.uid}`);
  t.like(bdel, { status: 400, body: { code: 9 } });
  t.regex(bdel.body.message, refusal('RoleBinding team-a/ci').message);
  await roleBindings.delete(asObject('RoleBinding team-a/ci'), b.uid);
  await identities.delete(by, i.uid);
  t.is((await s.admin.get(`/iam/v2beta1/identities/${i.uid}`)).status, 404);
});

test('managed: claim needs the update capability, and release gives the group back', async (t) => {
  const { groups, managed } = s.arbor.services;
  const g = await groups.create({ kind: 'admin' }, org, { name: 'legacy' });
  const reader = await createIdentity(s.admin, org, 'reader');
  await createBinding(s.admin, org, reader, viewer);
  const asReader: Principal = { kind: 'identity', uid: reader, manager: 'Group team-r/legacy' };
  t.like(await t.throwsAsync(managed.claim(asReader, 'groups', g.uid)), { code: 7 });
  t.is((await s.admin.patch(`${G}/${g.uid}`, { description: 'still free' })).status, 200);

  const adopter: Principal = { kind: 'identity', uid: ownerId, manager: 'Group team-a/legacy' };
  await managed.claim(adopter, 'groups', g.uid);
  await managed.claim(adopter, 'groups', g.uid); // idempotent
  t.is((await s.admin.patch(`${G}/${g.uid}`, { description: 'no' })).status, 400);
  t.like(
    await t.throwsAsync(managed.release(asObject('Group team-b/legacy'), 'groups', g.uid)),
    { code: 9 },
    'only the manager releases',
  );
  await managed.release(adopter, 'groups', g.uid);
  t.is((await s.admin.patch(`${G}/${g.uid}`, { description: 'free again' })).status, 200);
});
