import type { ExecutionContext } from 'ava';
import type { ControllerOptions } from '../../src/reconciler/controller.js';
import { reconcilerSuite, startController } from '../helpers/controller.js';
import { condition, crs, eventually, type TestCluster } from '../helpers/kube.js';
import type { TestServer } from '../helpers/server.js';

/**
 * Observe mode on the real kube-apiserver: `arbor.dev/mode: observe` on an
 * object or its namespace writes nothing to Arbor, reports the would-be write as the
 * Drifted condition, an Event and the kubectl columns; switching to enforce applies it.
 */
let cluster: TestCluster;
let server: TestServer;
const maybe = reconcilerSuite('reconciler observe e2e', (c, s) => {
  [cluster, server] = [c, s];
});

const G = '/iam/v2beta1/groups';
const drifted = (o: any) => (o?.status?.conditions ?? []).find((c: any) => c.type === 'Drifted');

const controllerFor = (t: ExecutionContext, ns: string, extra: Partial<ControllerOptions> = {}) =>
  startController(t, cluster, server, ns, { adminNamespaces: [ns], ...extra });

function createGroup(ns: string, name: string, spec: object, annotations?: Record<string, string>) {
  return cluster.custom.createNamespacedCustomObject({
    group: 'arbor.dev',
    version: 'v1alpha1',
    plural: 'groups',
    namespace: ns,
    body: {
      apiVersion: 'arbor.dev/v1alpha1',
      kind: 'Group',
      metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) },
      spec,
    },
  });
}

const annotate = (ns: string, name: string, mode: string) =>
  cluster.kubectl([
    'annotate',
    '--overwrite',
    '-n',
    ns,
    'groups.arbor.dev',
    name,
    `arbor.dev/mode=${mode}`,
  ]);

maybe(
  'observe: an object in observe mode writes nothing, says Drifted, and enforce applies it',
  async (t) => {
    const ns = await cluster.namespace('observe');
    const k = crs(cluster, ns);
    const { calls } = controllerFor(t, ns);
    await createGroup(ns, 'acme', { description: 'v1' }, { 'arbor.dev/mode': 'observe' });

    const seen = await k.waitFor('Group', 'acme', (o) => drifted(o)?.status === 'True');
    t.like(drifted(seen), { reason: 'WouldCreate' });
    t.regex(drifted(seen).message, /would create name: "acme"; description: "v1"/);
    t.like(condition(seen, 'Ready'), { status: 'False', reason: 'Drifted' });
    t.is(seen.status.mode, 'observe');
    t.is(seen.status.uid, undefined);
    t.is(seen.metadata.finalizers, undefined, 'observe mode adds no finalizer');
    t.is(calls('groups.create'), 0);
    t.deepEqual((await server.admin.get(`${G}?name=acme`)).body.groups, []);
    const events = await eventually('a Drifted event', async () => {
      const e = await k.events('acme');
      return e.some((x) => x.reason === 'Drifted') ? e : undefined;
    });
    t.regex(events.find((e) => e.reason === 'Drifted')!.message!, /would create/);
    const table = await cluster.kubectl(['get', 'groups.arbor.dev', '-n', ns]);
    t.regex(table, /NAME\s+READY\s+SYNCED\s+MODE\s+DRIFTED\s+UID\s+AGE/);
    t.regex(table, /acme\s+False\s+True\s+observe\s+True\s+/);

    // Switching to enforce applies what was observed.
    await annotate(ns, 'acme', 'enforce');
    const ready = await k.waitFor(
      'Group',
      'acme',
      (o) => condition(o, 'Ready')?.status === 'True' && o.status.uid !== undefined,
    );
    t.is(drifted(ready), undefined, 'enforce mode has no Drifted condition');
    t.is(ready.status.mode, undefined);
    t.is(calls('groups.create'), 1);
    t.like((await server.admin.get(`${G}/${ready.status.uid}`)).body, { description: 'v1' });

    // Observing again: a spec change is reported field by field, and not written.
    await annotate(ns, 'acme', 'observe');
    await k.waitFor('Group', 'acme', (o) => drifted(o)?.status === 'False');
    await k.patch('Group', 'acme', { description: 'v2' });
    const drift = await k.waitFor('Group', 'acme', (o) => drifted(o)?.reason === 'WouldUpdate');
    t.regex(drifted(drift).message, /would update description: "v1" → "v2"/);
    t.is(calls('groups.update'), 0);
    t.like((await server.admin.get(`${G}/${ready.status.uid}`)).body, { description: 'v1' });

    // Deleting an observed object deletes nothing in Arbor.
    await k.delete('Group', 'acme');
    await k.gone('Group', 'acme');
    t.is((await server.admin.get(`${G}/${ready.status.uid}`)).status, 200);
    t.is(calls('groups.delete'), 0);
  },
);

maybe(
  'observe: a namespace label observes all its objects; removing it enforces within a resync',
  async (t) => {
    const ns = await cluster.namespace('observe-ns');
    await cluster.kubectl(['label', 'namespace', ns, 'arbor.dev/mode=observe']);
    const k = crs(cluster, ns);
    const { calls } = controllerFor(t, ns, { resyncMs: 2_000 });
    await k.apply('Group', 'team', { description: 'from the namespace' });
    const seen = await k.waitFor('Group', 'team', (o) => drifted(o)?.status === 'True');
    t.like(drifted(seen), { reason: 'WouldCreate' });
    t.is(calls('groups.create'), 0);

    await cluster.kubectl(['label', 'namespace', ns, 'arbor.dev/mode-']);
    const ready = await k.waitFor(
      'Group',
      'team',
      (o) => condition(o, 'Ready')?.status === 'True' && o.status.uid !== undefined,
      30_000,
    );
    t.is(calls('groups.create'), 1);
    t.is(drifted(ready), undefined);
  },
);

maybe('observe: a RoleBinding in observe mode shows the access delta of binding it', async (t) => {
  const ns = await cluster.namespace('observe-rb');
  const k = crs(cluster, ns);
  const { calls } = controllerFor(t, ns);
  await k.apply('Group', 'org', {});
  await k.apply('Identity', 'bot', {
    groupRef: { name: 'org' },
    claimMatch: { issuer: 'https://ci.example', subject: 'bot' },
  });
  await k.ready('Identity', 'bot');
  await cluster.custom.createNamespacedCustomObject({
    group: 'arbor.dev',
    version: 'v1alpha1',
    plural: 'rolebindings',
    namespace: ns,
    body: {
      apiVersion: 'arbor.dev/v1alpha1',
      kind: 'RoleBinding',
      metadata: { name: 'bot-viewer', namespace: ns, annotations: { 'arbor.dev/mode': 'observe' } },
      spec: { groupRef: { name: 'org' }, identityRef: { name: 'bot' }, role: 'viewer' },
    },
  });
  const seen = await k.waitFor('RoleBinding', 'bot-viewer', (o) => drifted(o)?.status === 'True');
  t.like(drifted(seen), { reason: 'WouldCreate' });
  t.regex(drifted(seen).message, /access: 1 change\(s\): bot gains \d+ capabilities at org/);
  t.is(calls('roleBindings.create'), 0);
});
