import { crs, type TestCluster } from '../helpers/kube.js';
import { reconcilerSuite, startController } from '../helpers/controller.js';
import type { TestServer } from '../helpers/server.js';

/**
 * The reconciler keeps running while kube-apiserver and etcd are restarted in place
 * (scripts/control-plane/restart.sh): its watches resume by themselves (no resync: it is
 * an hour away here), objects created right after the outage and later converge, and no
 * Arbor resource is created twice.
 */
let cluster: TestCluster;
let server: TestServer;
// Restarting needs a control plane of our own, never a shared external cluster.
const maybe = reconcilerSuite(
  'restart e2e',
  (c, s) => {
    [cluster, server] = [c, s];
  },
  { localOnly: true },
);

maybe(
  'restart: watches resume after kube-apiserver and etcd restart, with no duplicates',
  async (t) => {
    const ns = await cluster.namespace('restart');
    const k = crs(cluster, ns);
    const counted = startController(t, cluster, server, ns, {
      adminNamespaces: [ns],
    });
    await k.apply('Group', 'org', {});
    const org = (await k.ready('Group', 'org')).status.uid as string;

    await cluster.restart!('both', 3);
    // Right after the outage, before the watches are necessarily back.
    await k.apply('Group', 'during', { parentRef: { name: 'org' } });
    await k.ready('Group', 'during', 60_000);
    await cluster.restart!('apiserver', 1);
    await k.apply('Group', 'after', { parentRef: { name: 'org' } });
    await k.patch('Group', 'org', { description: 'changed after the restarts' });
    await k.ready('Group', 'after', 60_000);
    await k.waitFor('Group', 'org', (o) => o.status.observedGeneration === 2, 60_000);

    const children = await server.admin.get(`/iam/v2beta1/groups?uidp.children_of=${org}`);
    t.deepEqual(
      children.body.groups.map((g: { name: string }) => g.name).sort(),
      ['after', 'during'],
      'each object made exactly one group',
    );
    t.is(counted.calls('groups.create'), 3);
    t.is(
      (await server.admin.get(`/iam/v2beta1/groups/${org}`)).body.description,
      'changed after the restarts',
    );
  },
);
