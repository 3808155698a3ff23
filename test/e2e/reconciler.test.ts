import type { ExecutionContext } from 'ava';
import { unavailable } from '../../src/core/rpc-error.js';
import type { ControllerOptions } from '../../src/reconciler/controller.js';
import { condition, eventually, type TestCluster, crs } from '../helpers/kube.js';
import { reconcilerSuite, startController } from '../helpers/controller.js';
import type { TestServer } from '../helpers/server.js';

/**
 * The reconciler against a real kube-apiserver + etcd and a real Arbor (fresh database):
 * the lifecycle of one Group, invalid specs, drift and idle resyncs.
 */
let cluster: TestCluster;
let server: TestServer;
const maybe = reconcilerSuite('reconciler e2e', (c, s) => {
  [cluster, server] = [c, s];
});

const G = '/iam/v2beta1/groups';
/**
 * A controller for one namespace, stopped when the test ends. These tests manage
 * organizations, which only the Arbor administrator may create: their namespace is
 * assigned the administrator (ARBOR_RECONCILER_ADMIN_NAMESPACES).
 */
const controllerFor = (t: ExecutionContext, ns: string, extra: Partial<ControllerOptions> = {}) =>
  startController(t, cluster, server, ns, { adminNamespaces: [ns], ...extra });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

maybe('reconciler: a Group becomes Ready with a uid that the REST API returns', async (t) => {
  const ns = await cluster.namespace('ready');
  const k = crs(cluster, ns);
  const { calls } = controllerFor(t, ns);
  await k.apply('Group', 'acme', { description: 'Acme Corp' });
  const obj = await k.ready('Group', 'acme');
  t.regex(obj.status.uid, /^[0-9a-f]{40}$/);
  t.deepEqual(obj.metadata.finalizers, ['arbor.dev/finalizer']);
  t.like(condition(obj, 'Synced'), {
    status: 'True',
    reason: 'ReconcileSuccess',
    observedGeneration: 1,
  });
  const rest = await server.admin.get(`${G}/${obj.status.uid}`);
  t.is(rest.status, 200);
  t.like(rest.body, { name: 'acme', description: 'Acme Corp' });
  t.is(calls('groups.create'), 1);
  const events = await eventually('a Created event', async () => {
    const e = await k.events('acme');
    return e.some((x) => x.reason === 'Created') ? e : undefined;
  });
  t.true(events.some((e) => e.message?.includes(obj.status.uid)));
});

maybe('reconciler: a spec change updates the group and its generation is observed', async (t) => {
  const ns = await cluster.namespace('update');
  const k = crs(cluster, ns);
  const { calls } = controllerFor(t, ns);
  await k.apply('Group', 'org', { name: 'the org', description: 'v1' });
  const before = await k.ready('Group', 'org');
  await k.patch('Group', 'org', { description: 'v2', name: 'renamed org' });
  const after = await k.waitFor('Group', 'org', (o) => o.status.observedGeneration === 2);
  t.is(condition(after, 'Ready').status, 'True');
  t.is(after.status.uid, before.status.uid);
  const rest = await server.admin.get(`${G}/${after.status.uid}`);
  t.like(rest.body, { name: 'renamed org', description: 'v2' });
  t.is(calls('groups.update'), 1);
  t.is(calls('groups.create'), 1);
});

maybe('reconciler: deleting the object deletes the group, then lets the object go', async (t) => {
  const ns = await cluster.namespace('delete');
  const k = crs(cluster, ns);
  controllerFor(t, ns);
  await k.apply('Group', 'doomed', {});
  const { status } = await k.ready('Group', 'doomed');
  await k.delete('Group', 'doomed');
  await k.gone('Group', 'doomed');
  t.is((await server.admin.get(`${G}/${status.uid}`)).status, 404);
});

maybe('reconciler: deletionPolicy Orphan leaves the group in Arbor', async (t) => {
  const ns = await cluster.namespace('orphan');
  const k = crs(cluster, ns);
  controllerFor(t, ns);
  await k.apply('Group', 'kept', { deletionPolicy: 'Orphan' });
  const { status } = await k.ready('Group', 'kept');
  await k.delete('Group', 'kept');
  await k.gone('Group', 'kept');
  t.is((await server.admin.get(`${G}/${status.uid}`)).status, 200);
});

maybe(
  'reconciler: a spec the service rejects is InvalidSpec, not retried, until it is fixed',
  async (t) => {
    const ns = await cluster.namespace('invalid');
    const k = crs(cluster, ns);
    const { controller, calls } = controllerFor(t, ns);
    await k.apply('Group', 'bad', { description: 'two\nlines' });
    const obj = await k.waitFor(
      'Group',
      'bad',
      (o) => condition(o, 'Ready')?.reason === 'InvalidSpec',
    );
    t.like(condition(obj, 'Ready'), {
      status: 'False',
      message:
        'Invalid argument: description: description must be at most 512 characters with no line breaks or tabs',
    });
    t.is(obj.status.uid, undefined);
    const key = `Group/${ns}/bad`;
    const runs = controller.stats.perKey.get(key) ?? 0;
    await controller.resyncNow();
    await sleep(3_000);
    t.true((controller.stats.perKey.get(key) ?? 0) - runs <= 1, 'at most the resync itself');
    t.is((await k.get('Group', 'bad')).metadata.resourceVersion, obj.metadata.resourceVersion);
    t.is(calls('groups.create'), 1, 'one attempt, rejected by validation before any write');

    await k.patch('Group', 'bad', { description: 'one line' });
    const fixed = await k.ready('Group', 'bad');
    t.is(fixed.status.observedGeneration, 2);
  },
);

maybe(
  'reconciler: a parentUid that does not exist waits with backoff, not a retry storm',
  async (t) => {
    const ns = await cluster.namespace('missing');
    const k = crs(cluster, ns);
    const { controller } = controllerFor(t, ns);
    const ghost = 'f'.repeat(40);
    await k.apply('Group', 'stray', { parentUid: ghost });
    const obj = await k.waitFor(
      'Group',
      'stray',
      (o) => condition(o, 'Ready')?.reason === 'NotFound',
    );
    t.is(condition(obj, 'Ready').message, `Not found: iam.arbor.dev/Group ${ghost}`);
    await sleep(3_000);
    // 100 ms doubling, capped at 2 s: about six attempts in the first 3-4 s, never dozens.
    const n = controller.stats.perKey.get(`Group/${ns}/stray`) ?? 0;
    t.true(n <= 8, `${n} reconciles`);
    t.is(condition(obj, 'Synced').status, 'False');
    // Groups cannot move: the CRD refuses a new parent instead of the reconciler failing.
    const parent = await server.admin.post(G, { name: 'late parent' });
    const refused = await k
      .patch('Group', 'stray', {
        parentUid: parent.body.uid,
      })
      .catch((e: any) => e);
    t.is(refused.code, 422);
    t.regex(String(refused.body), /the parent of a group cannot change/);
  },
);

maybe('reconciler: an idle resync writes nothing to Arbor or to Kubernetes', async (t) => {
  const ns = await cluster.namespace('idle');
  const k = crs(cluster, ns);
  const { controller, writes } = controllerFor(t, ns);
  await k.apply('Group', 'root', {});
  await k.apply('Group', 'child', { parentRef: { name: 'root' }, description: 'c' });
  const child = await k.ready('Group', 'child');
  const root = await k.ready('Group', 'root');
  const writesBefore = writes();
  const statusWrites = controller.stats.statusWrites;
  const restBefore = (await server.admin.get(`${G}/${child.status.uid}`)).body;
  const runs = controller.stats.reconciles;
  await controller.resyncNow();
  await eventually('the resync to run', () =>
    controller.stats.reconciles >= runs + 2 ? true : undefined,
  );
  await sleep(500);
  t.is(writes(), writesBefore, 'no create/update/delete calls');
  t.is(controller.stats.statusWrites, statusWrites, 'no status writes');
  t.is((await k.get('Group', 'child')).metadata.resourceVersion, child.metadata.resourceVersion);
  t.is((await k.get('Group', 'root')).metadata.resourceVersion, root.metadata.resourceVersion);
  t.is((await server.admin.get(`${G}/${child.status.uid}`)).body.updateTime, restBefore.updateTime);
});

maybe(
  'reconciler: a REST write to a managed group is refused, naming the object that manages it',
  async (t) => {
    const ns = await cluster.namespace('drift');
    const k = crs(cluster, ns);
    const { controller } = controllerFor(t, ns);
    await k.apply('Group', 'owned', { description: 'from kubernetes' });
    const first = await k.ready('Group', 'owned');
    const uid = first.status.uid as string;
    for (const res of [
      await server.admin.patch(`${G}/${uid}`, { description: 'changed by hand' }),
      await server.admin.delete(`${G}/${uid}`),
    ]) {
      t.is(res.status, 400);
      t.is(res.body.code, 9, 'FAILED_PRECONDITION');
      t.regex(res.body.message, new RegExp(`managed by the Kubernetes object Group ${ns}/owned`));
      const pf = res.body.details.find((d: any) => d['@type'].endsWith('PreconditionFailure'));
      t.like(pf?.violations?.[0], {
        type: 'MANAGED_BY_KUBERNETES',
        subject: `Group ${ns}/owned`,
      });
    }
    t.is((await server.admin.get(`${G}/${uid}`)).body.description, 'from kubernetes');
    // Children are not the group: REST may still build below it.
    t.is((await server.admin.post(`${G}/${uid}`, { name: 'by hand' })).status, 200);

    // A group that vanished anyway (deleted on the object's behalf here) is recreated.
    const asOwner = { kind: 'system', name: 'test', manager: `Group ${ns}/owned` } as const;
    const child = (await server.admin.get(`${G}?uidp.children_of=${uid}`)).body.groups[0].uid;
    await server.arbor.services.groups.delete(asOwner, child);
    await server.arbor.services.groups.delete(asOwner, uid);
    await controller.resyncNow();
    const again = await k.waitFor('Group', 'owned', (o) => o.status.uid && o.status.uid !== uid);
    t.is((await server.admin.get(`${G}/${again.status.uid}`)).status, 200);
    t.is(
      (await server.admin.patch(`${G}/${again.status.uid}`, { description: 'x' })).status,
      400,
      'the new one is managed too',
    );
    const events = await k.events('owned');
    t.true(events.some((e) => e.reason === 'Recreated' && e.type === 'Warning'));
  },
);

maybe('reconciler: deleting with deletionPolicy Orphan gives the group back to REST', async (t) => {
  const ns = await cluster.namespace('release');
  const k = crs(cluster, ns);
  controllerFor(t, ns);
  await k.apply('Group', 'handover', { deletionPolicy: 'Orphan' });
  const { status } = await k.ready('Group', 'handover');
  t.is((await server.admin.patch(`${G}/${status.uid}`, { description: 'no' })).status, 400);
  await k.delete('Group', 'handover');
  await k.gone('Group', 'handover');
  const res = await server.admin.patch(`${G}/${status.uid}`, { description: 'mine now' });
  t.is(res.status, 200, JSON.stringify(res.body));
});

maybe('reconciler: two objects cannot manage one group', async (t) => {
  const ns = await cluster.namespace('twice');
  const k = crs(cluster, ns);
  controllerFor(t, ns);
  await k.apply('Group', 'first', { description: 'one' });
  const { status } = await k.ready('Group', 'first');
  await k.apply('Group', 'second', { adoptUid: status.uid, description: 'two' });
  const obj = await k.waitFor(
    'Group',
    'second',
    (o) => condition(o, 'Ready')?.reason === 'FailedPrecondition',
  );
  t.regex(condition(obj, 'Ready').message, new RegExp(`Group ${ns}/first`));
  t.is((await server.admin.get(`${G}/${status.uid}`)).body.description, 'one');
});

maybe(
  'reconciler: an outage is Synced=False with Ready kept, retried until it heals',
  async (t) => {
    const ns = await cluster.namespace('outage');
    const k = crs(cluster, ns);
    let down = false;
    const groups = server.arbor.services.groups;
    const flaky = new Proxy(groups, {
      get: (target, prop) => {
        const v = Reflect.get(target, prop, target) as unknown;
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) =>
          down ? Promise.reject(unavailable('database down')) : v.apply(target, args);
      },
    });
    const { controller } = controllerFor(t, ns, {
      services: { ...server.arbor.services, groups: flaky },
    });
    await k.apply('Group', 'steady', { description: 'v1' });
    await k.ready('Group', 'steady');
    down = true;
    await k.patch('Group', 'steady', { description: 'v2' });
    const failing = await k.waitFor(
      'Group',
      'steady',
      (o) => condition(o, 'Synced')?.status === 'False',
    );
    t.like(condition(failing, 'Synced'), {
      reason: 'ReconcileError',
      message: 'Unavailable: database down',
    });
    t.like(condition(failing, 'Ready'), { status: 'True', observedGeneration: 1 });
    const key = `Group/${ns}/steady`;
    const before = controller.stats.perKey.get(key) ?? 0;
    await sleep(2_000);
    const retries = (controller.stats.perKey.get(key) ?? 0) - before;
    t.true(retries >= 1 && retries <= 6, `${retries} retries in 2 s`);
    down = false;
    const healed = await k.ready('Group', 'steady');
    t.is(healed.status.observedGeneration, 2);
    t.is(condition(healed, 'Synced').status, 'True');
    t.is((await server.admin.get(`${G}/${healed.status.uid}`)).body.description, 'v2');
  },
);
