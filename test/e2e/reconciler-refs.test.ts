import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import { CoordinationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { ControllerOptions } from '../../src/reconciler/controller.js';
import { condition, eventually, type Kind, type TestCluster, crs } from '../helpers/kube.js';
import { reconcilerSuite, startController } from '../helpers/controller.js';
import type { TestServer } from '../helpers/server.js';

/**
 * The reconciler against a real kube-apiserver: Groups, Identities and RoleBindings that
 * refer to each other by name, the shipped examples, and leader hand-over.
 */
let cluster: TestCluster;
let server: TestServer;
const maybe = reconcilerSuite('reconciler e2e', (c, s) => {
  [cluster, server] = [c, s];
});

/**
 * A controller for one namespace, stopped when the test ends. These tests manage
 * organizations, which only the Arbor administrator may create: their namespace is
 * assigned the administrator (ARBOR_RECONCILER_ADMIN_NAMESPACES).
 */
const controllerFor = (t: ExecutionContext, ns: string, extra: Partial<ControllerOptions> = {}) =>
  startController(t, cluster, server, ns, { adminNamespaces: [ns], ...extra });

const tree: Array<[Kind, string, object]> = [
  [
    'RoleBinding',
    'reader',
    { groupRef: { name: 'team' }, identityRef: { name: 'bot' }, role: 'viewer' },
  ],
  [
    'Identity',
    'bot',
    {
      groupRef: { name: 'team' },
      claimMatch: { issuer: 'https://issuer.example', subject: 'system:serviceaccount:ci:bot' },
    },
  ],
  ['Group', 'team', { parentRef: { name: 'org' }, description: 'a folder' }],
  ['Group', 'org', {}],
];

maybe('reconciler: references by name converge whatever order objects arrive in', async (t) => {
  const ns = await cluster.namespace('order');
  const k = crs(cluster, ns);
  controllerFor(t, ns);
  // Children first: each waits for the one it names.
  for (const [kind, name, spec] of tree.slice(0, 3)) await k.apply(kind, name, spec);
  const waiting = await k.waitFor(
    'Group',
    'team',
    (o) => condition(o, 'Ready')?.reason === 'WaitingForReference',
  );
  t.regex(condition(waiting, 'Ready').message, /Group "org" does not exist/);
  await k.apply('Group', 'org', {});

  const org = await k.ready('Group', 'org');
  const team = await k.ready('Group', 'team');
  const bot = await k.ready('Identity', 'bot');
  const reader = await k.ready('RoleBinding', 'reader');
  t.true(team.status.uid.startsWith(`${org.status.uid}/`));
  t.true(bot.status.uid.startsWith(`${team.status.uid}/`));

  const binding = await server.admin.get(`/iam/v2beta1/roleBindings/${reader.status.uid}`);
  t.is(binding.status, 200);
  t.like(binding.body, { identity: { uid: bot.status.uid }, role: { name: 'viewer' } });
  const identity = await server.admin.get(`/iam/v2beta1/identities/${bot.status.uid}`);
  t.like(identity.body, { name: 'bot', claimMatch: { subject: 'system:serviceaccount:ci:bot' } });
});

maybe('reconciler: deleting a whole tree at once converges, children before parents', async (t) => {
  const ns = await cluster.namespace('teardown');
  const k = crs(cluster, ns);
  controllerFor(t, ns);
  for (const [kind, name, spec] of tree) await k.apply(kind, name, spec);
  const uids: string[] = [];
  for (const [kind, name] of tree) uids.push((await k.ready(kind, name)).status.uid);
  // Parents first, the hard order: the org cannot go while its folder exists.
  for (const [kind, name] of [...tree].reverse()) await k.delete(kind, name);
  for (const [kind, name] of tree) {
    await k.gone(kind, name);
  }
  const paths = ['roleBindings', 'identities', 'groups', 'groups'];
  for (const [i, uid] of uids.entries()) {
    t.is((await server.admin.get(`/iam/v2beta1/${paths[i]}/${uid}`)).status, 404, uid);
  }
});

maybe('reconciler: the shipped examples converge', async (t) => {
  const ns = await cluster.namespace('examples');
  const k = crs(cluster, ns);
  controllerFor(t, ns);
  const repo = fileURLToPath(new URL('../../', import.meta.url));
  await cluster.kubectl(['apply', '-n', ns, '-f', join(repo, 'crds/examples/org-tree.yaml')]);
  for (const [kind, name] of [
    ['Group', 'acme'],
    ['Group', 'acme-platform'],
    ['Identity', 'workload'],
    ['RoleBinding', 'workload-viewer'],
  ] as const) {
    const o = await k.ready(kind, name);
    t.truthy(o.status.uid, `${kind} ${name}`);
  }
  const table = await cluster.kubectl(['get', '-n', ns, 'agrp']);
  // MODE and DRIFTED are empty in enforce mode (observe mode: reconciler-observe.test.ts).
  t.regex(table, /NAME\s+READY\s+SYNCED\s+MODE\s+DRIFTED\s+UID\s+AGE/);
  t.regex(table, /acme-platform\s+True\s+True\s+[0-9a-f]{40}\/[0-9a-f]{16}/);
});

maybe(
  'reconciler: one leader at a time, and a new leader converges without duplicates',
  async (t) => {
    const ns = await cluster.namespace('leader');
    const k = crs(cluster, ns);
    const election = (identity: string) => ({
      leaderElection: {
        namespace: ns,
        name: 'arbor-reconciler',
        identity,
        leaseDurationMs: 3_000,
        renewDeadlineMs: 2_000,
        retryPeriodMs: 300,
      },
    });
    const a = controllerFor(t, ns, election('replica-a'));
    const b = controllerFor(t, ns, election('replica-b'));
    const leader = await eventually('a leader', () =>
      a.controller.isLeader ? a : b.controller.isLeader ? b : undefined,
    );
    const follower = leader === a ? b : a;
    t.false(follower.controller.isLeader);
    const lease = await cluster.kc
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: 'arbor-reconciler', namespace: ns });
    t.is(lease.spec?.holderIdentity, leader === a ? 'replica-a' : 'replica-b');

    for (const [kind, name, spec] of tree) await k.apply(kind, name, spec);
    const before = new Map<string, string>();
    for (const [kind, name] of tree) before.set(name, (await k.ready(kind, name)).status.uid);
    t.is(follower.writes(), 0, 'the follower touched nothing');

    await leader.controller.stop(); // releases the lease
    await eventually(
      'the follower to take over',
      () => (follower.controller.isLeader ? true : undefined),
      10_000,
    );
    await k.apply('Group', 'late', { parentRef: { name: 'org' } });
    await k.ready('Group', 'late');
    await eventually('the new leader to have looked at everything', () =>
      follower.controller.stats.reconciles >= tree.length + 1 ? true : undefined,
    );
    for (const [kind, name] of tree) t.is((await k.get(kind, name)).status.uid, before.get(name));
    t.is(follower.calls('groups.create'), 1, 'only the new object was created');
    t.is(follower.calls('identities.create') + follower.calls('roleBindings.create'), 0);
    const orgUid = before.get('org')!;
    const teams = await server.admin.get(
      `/iam/v2beta1/groups?uidp.children_of=${orgUid}&name=team`,
    );
    t.is(teams.body.groups.length, 1, 'no duplicate folder');
  },
);

maybe('reconciler: the deploy/base RBAC is all the reconciler needs', async (t) => {
  // Install the base (its Deployments never run here: this control plane has no nodes),
  // then run the controller with a token of its ServiceAccount instead of admin.
  const repo = fileURLToPath(new URL('../../', import.meta.url));
  await cluster.kubectl([
    'apply',
    '--server-side',
    '--force-conflicts',
    '-k',
    join(repo, 'deploy/base'),
  ]);
  const { status } = await cluster.core.createNamespacedServiceAccountToken({
    name: 'arbor-reconciler',
    namespace: 'arbor-system',
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const admin = cluster.kc.getCurrentCluster()!;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [admin],
    users: [{ name: 'sa', token: status!.token }],
    contexts: [{ name: 'sa', cluster: admin.name, user: 'sa' }],
    currentContext: 'sa',
  });
  const ns = await cluster.namespace('rbac');
  const k = crs(cluster, ns);
  const { controller } = controllerFor(t, ns, {
    kubeConfig: kc,
    namespace: undefined, // cluster-wide, as deployed
    leaderElection: {
      namespace: 'arbor-system',
      name: 'arbor-reconciler',
      identity: 'rbac-test',
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 300,
    },
  });
  await eventually('leadership', () => (controller.isLeader ? true : undefined));
  await k.apply('Group', 'org', {});
  await k.apply('Identity', 'bot', tree[1]![2]);
  await k.apply('Group', 'team', tree[2]![2]);
  await k.apply('RoleBinding', 'reader', tree[0]![2]);
  for (const [kind, name] of tree) await k.ready(kind, name);
  const events = await cluster.core.listNamespacedEvent({ namespace: ns });
  t.true(
    events.items.some((e) => e.reason === 'Created'),
    'Events are allowed',
  );
  const secrets = kc.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: 'arbor-system' });
  t.like(await secrets.catch((e: unknown) => e), { code: 403 }, 'and no more: no Secrets');
  await k.delete('RoleBinding', 'reader');
  await k.gone('RoleBinding', 'reader');
  t.pass();
});
