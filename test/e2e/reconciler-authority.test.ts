import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { ExecutionContext } from 'ava';
import {
  assignAuthority,
  builtinRole,
  namespaceIdentity,
  revokeAuthority,
} from '../helpers/authority.js';
import { createGroup } from '../helpers/fixtures.js';
import { createIdentity } from '../helpers/iam-fixtures.js';
import { condition, crs, type TestCluster } from '../helpers/kube.js';
import { reconcilerSuite, startController } from '../helpers/controller.js';
import type { TestServer } from '../helpers/server.js';

/**
 * Every namespace acts with the authority its NamespaceAuthority gives it, checked by the
 * same services and rules as REST: team-a manages its folder, team-b can touch nothing of
 * team-a's, a namespace without an assignment changes nothing, and a revoked assignment
 * stops further changes. Every "nothing changed" is asserted through the REST API.
 */
let cluster: TestCluster;
let server: TestServer;
/** Arbor, as the administrator built it through REST. */
const arbor = { orgA: '', orgB: '', folderA: '', botA: '', idA: '', idB: '' };
let nsA = '';
let nsB = '';

const maybe = reconcilerSuite('reconciler authority e2e', async (c, s) => {
  [cluster, server] = [c, s];
  const admin = server.admin;
  [nsA, nsB] = await Promise.all([cluster.namespace('team-a'), cluster.namespace('team-b')]);
  arbor.orgA = await createGroup(admin, 'org-a');
  arbor.orgB = await createGroup(admin, 'org-b');
  arbor.folderA = await createGroup(admin, 'payments', arbor.orgA, 'team-a by hand');
  arbor.botA = await createIdentity(admin, arbor.folderA, 'deployer');
  arbor.idA = await namespaceIdentity(admin, cluster, arbor.orgA, nsA);
  arbor.idB = await namespaceIdentity(admin, cluster, arbor.orgB, nsB);
  await assignAuthority(cluster, `a-${nsA}`, arbor.idA, [nsA]);
  await assignAuthority(cluster, `b-${nsB}`, arbor.idB, [nsB]);
});

const G = '/iam/v2beta1/groups';
/** A controller for one namespace (no admin namespaces), stopped when the test ends. */
const controllerFor = (t: ExecutionContext, ns: string) => startController(t, cluster, server, ns);

/** Wait until Ready=False with `reason` for the current generation. */
const failsWith = (k: ReturnType<typeof crs>, kind: any, name: string, reason: string) =>
  k.waitFor(
    kind,
    name,
    (o) =>
      condition(o, 'Ready')?.status === 'False' &&
      condition(o, 'Ready')?.reason === reason &&
      condition(o, 'Ready')?.observedGeneration === o.metadata.generation,
  );

/** What REST shows below (and at) a group: every group, identity and binding, as JSON. */
async function snapshot(root: string): Promise<string> {
  const a = server.admin;
  const [self, groups, ids, bindings] = await Promise.all([
    a.get(`${G}/${root}`),
    a.get(`${G}?uidp.descendants_of=${root}&page_size=200`),
    a.get(`/iam/v2beta1/identities?uidp.descendants_of=${root}&page_size=200`),
    a.get(`/iam/v2beta1/roleBindings?uidp.descendants_of=${root}&page_size=200`),
  ]);
  return JSON.stringify([self.body, groups.body, ids.body, bindings.body]);
}

maybe('authority: a namespace manages the folder its identity owns', async (t) => {
  const k = crs(cluster, nsA);
  controllerFor(t, nsA);
  const viewer = await builtinRole(server.admin, 'viewer');
  await k.apply('Group', 'payments', {
    adoptUid: arbor.folderA,
    parentUid: arbor.orgA,
    description: 'team-a in git',
  });
  await k.apply('Group', 'ledger', { parentRef: { name: 'payments' } });
  await k.apply('Identity', 'ci', {
    groupRef: { name: 'ledger' },
    claimMatch: { issuer: 'https://token.actions.githubusercontent.com', subject: 'repo:a/b' },
  });
  await k.apply('RoleBinding', 'ci-viewer', {
    groupRef: { name: 'ledger' },
    identityRef: { name: 'ci' },
    roleUid: viewer,
  });
  const ledger = await k.ready('Group', 'ledger');
  await k.ready('RoleBinding', 'ci-viewer');
  t.is((await k.ready('Group', 'payments')).status.uid, arbor.folderA);
  const rest = await server.admin.get(`${G}/${arbor.folderA}`);
  t.is(rest.body.description, 'team-a in git');
  t.is((await server.admin.get(`${G}/${ledger.status.uid}`)).status, 200);
  t.true(ledger.status.uid.startsWith(`${arbor.folderA}/`), 'under the folder');
  // The namespace's identity is an owner of org-a only: org-b does not exist for it.
  await k.apply('Group', 'elsewhere', { parentUid: arbor.orgB });
  const refused = await failsWith(k, 'Group', 'elsewhere', 'NotFound');
  t.is(refused.status.uid, undefined);
});

maybe(
  "authority: team-b cannot bind, adopt, create under or delete anything of team-a's",
  async (t) => {
    const k = crs(cluster, nsB);
    const { calls } = controllerFor(t, nsB);
    const owner = await builtinRole(server.admin, 'owner');
    const before = await snapshot(arbor.orgA);
    const orgs = async () =>
      ((await server.admin.get(`${G}?page_size=200`)).body.groups as Array<{ uid: string }>)
        .filter((g) => !g.uid.includes('/'))
        .map((g) => g.uid);
    const orgsBefore = await orgs();

    await k.apply('RoleBinding', 'steal', {
      groupUid: arbor.orgA,
      identityUid: arbor.idB,
      roleUid: owner,
    });
    await k.apply('Identity', 'take', {
      adoptUid: arbor.botA,
      groupUid: arbor.folderA,
      claimMatch: { issuer: 'https://evil.example.com', subject: 'me' },
    });
    await k.apply('Group', 'squat', { parentUid: arbor.folderA });
    await k.apply('Group', 'grab', { adoptUid: arbor.folderA, parentUid: arbor.orgA });
    await k.apply('Group', 'new-org', {});

    const steal = await failsWith(k, 'RoleBinding', 'steal', 'NotFound');
    const take = await failsWith(k, 'Identity', 'take', 'NotFound');
    await failsWith(k, 'Group', 'squat', 'NotFound');
    await failsWith(k, 'Group', 'grab', 'NotFound');
    const org = await failsWith(k, 'Group', 'new-org', 'PermissionDenied');
    t.regex(condition(org, 'Ready').message, /only an Arbor administrator can create an org/);
    for (const o of [steal, take, org]) t.is(o.status.uid, undefined);

    // Deleting: even an object whose status names team-a's folder (status is writable by
    // anyone granted groups/status) deletes nothing but as team-b.
    await k.apply('Group', 'decoy', { parentUid: arbor.orgB });
    const decoy = await k.ready('Group', 'decoy');
    await cluster.custom.patchNamespacedCustomObjectStatus(
      {
        group: 'arbor.dev',
        version: 'v1alpha1',
        plural: 'groups',
        namespace: nsB,
        name: 'decoy',
        body: { status: { uid: arbor.folderA } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await k.delete('Group', 'decoy');
    await k.gone('Group', 'decoy');
    t.is((await server.admin.get(`${G}/${decoy.status.uid}`)).status, 200, 'left as it was');

    t.is(await snapshot(arbor.orgA), before, "nothing of team-a's changed");
    t.deepEqual(await orgs(), orgsBefore, 'no new organization');
    t.true(calls('roleBindings.create') >= 1, 'each attempt reached the service and was refused');
  },
);

maybe('authority: a namespace without an assignment changes nothing', async (t) => {
  const ns = await cluster.namespace('nobody');
  const k = crs(cluster, ns);
  const { writes } = controllerFor(t, ns);
  const before = await snapshot(arbor.orgA);
  await k.apply('Group', 'folder', { parentUid: arbor.orgA });
  const obj = await failsWith(k, 'Group', 'folder', 'NoAuthority');
  t.like(condition(obj, 'Synced'), { status: 'False', reason: 'NoAuthority' });
  t.regex(condition(obj, 'Ready').message, /has no NamespaceAuthority/);
  t.regex(condition(obj, 'Ready').message, /docs\/reconciler\.md/);
  t.is(obj.metadata.finalizers, undefined, 'no finalizer: it can always be deleted');
  t.is(writes(), 0, 'not even an attempt');
  await k.delete('Group', 'folder');
  await k.gone('Group', 'folder');
  t.is(await snapshot(arbor.orgA), before);
});

maybe(
  'authority: a namespace pointed at an identity that does not accept its ServiceAccount is rejected',
  async (t) => {
    const ns = await cluster.namespace('borrow');
    const k = crs(cluster, ns);
    const { writes } = controllerFor(t, ns);
    // A cluster administrator names team-a's identity for another namespace: Arbor never
    // consented (the identity accepts only team-a's ServiceAccount), so nothing happens.
    await assignAuthority(cluster, `x-${ns}`, arbor.idA, [ns]);
    t.teardown(() => revokeAuthority(cluster, `x-${ns}`));
    await k.apply('Group', 'folder', { parentUid: arbor.orgA });
    const obj = await failsWith(k, 'Group', 'folder', 'AuthorityRejected');
    t.regex(
      condition(obj, 'Ready').message,
      new RegExp(`does not accept tokens of ServiceAccount ${ns}/arbor`),
    );
    t.is(writes(), 0);
  },
);

maybe('authority: revoking the assignment stops further changes', async (t) => {
  const ns = await cluster.namespace('revoked');
  const k = crs(cluster, ns);
  controllerFor(t, ns);
  const identity = await namespaceIdentity(server.admin, cluster, arbor.orgA, ns);
  await assignAuthority(cluster, `r-${ns}`, identity, [ns]);
  await k.apply('Group', 'temp', { parentUid: arbor.orgA, description: 'v1' });
  const { status } = await k.ready('Group', 'temp');

  await revokeAuthority(cluster, `r-${ns}`);
  // The revocation alone requeues the namespace's objects.
  await failsWith(k, 'Group', 'temp', 'NoAuthority');
  await k.patch('Group', 'temp', { description: 'v2' });
  await failsWith(k, 'Group', 'temp', 'NoAuthority');
  await k.delete('Group', 'temp');
  const stuck = await k.waitFor(
    'Group',
    'temp',
    (o) => condition(o, 'Synced')?.reason === 'DeleteFailed',
  );
  t.regex(condition(stuck, 'Synced').message, /deletionPolicy: Orphan/);
  const rest = await server.admin.get(`${G}/${status.uid}`);
  t.is(rest.status, 200, 'not deleted');
  t.is(rest.body.description, 'v1', 'not updated');
  // The way out without authority: orphan it.
  await k.patch('Group', 'temp', { deletionPolicy: 'Orphan' });
  await k.gone('Group', 'temp');
  t.is((await server.admin.get(`${G}/${status.uid}`)).status, 200);
});
