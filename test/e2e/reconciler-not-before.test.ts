import type { ExecutionContext } from 'ava';
import { crs, type TestCluster } from '../helpers/kube.js';
import { reconcilerSuite, startController } from '../helpers/controller.js';
import type { TestServer } from '../helpers/server.js';

/**
 * The reconciler against a real kube-apiserver: a RoleBinding custom resource with
 * `spec.notBefore` (a scheduled grant) syncs into an Arbor binding with that
 * start; the grant is denied before it and allowed from it, with no further reconcile (the
 * start is the binding's, honoured by every decision). The CRD keeps the start set once.
 */
let cluster: TestCluster;
let server: TestServer;
const maybe = reconcilerSuite('reconciler notBefore e2e', (c, s) => {
  [cluster, server] = [c, s];
});

const controllerFor = (t: ExecutionContext, ns: string) =>
  startController(t, cluster, server, ns, { adminNamespaces: [ns] });

const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

maybe(
  'reconciler: a RoleBinding with spec.notBefore grants from that instant, not before',
  async (t) => {
    const ns = await cluster.namespace('not-before');
    const k = crs(cluster, ns);
    const { calls } = controllerFor(t, ns);
    await k.apply('Group', 'org', {});
    await k.apply('Identity', 'bot', {
      groupRef: { name: 'org' },
      claimMatch: { issuer: 'https://issuer.example', subject: 'system:serviceaccount:ci:bot' },
    });
    const org = (await k.ready('Group', 'org')).status.uid as string;
    const bot = (await k.ready('Identity', 'bot')).status.uid as string;
    // Far enough ahead for the object to sync and be checked before it starts.
    const startAt = Date.now() + 8_000;
    const notBefore = new Date(startAt).toISOString();
    await k.apply('RoleBinding', 'later', {
      groupRef: { name: 'org' },
      identityRef: { name: 'bot' },
      role: 'viewer',
      notBefore,
    });
    const bound = await k.ready('RoleBinding', 'later');
    const uid = bound.status.uid as string;
    t.is(calls('roleBindings.create'), 1);
    const b = await server.admin.get(`/iam/v2beta1/roleBindings/${uid}`);
    t.is(b.status, 200);
    t.is(b.body.notBefore, notBefore);

    const check = async () =>
      (
        await server.admin.post('/iam/v2beta1/access:check', {
          identityUid: bot,
          capability: 'groups.list',
          groupUid: org,
        })
      ).body as { allowed: boolean };
    const early = await check();
    // Decided before the start (a loaded machine might answer after it; that proves nothing).
    if (Date.now() < startAt) t.false(early.allowed, 'granted before its notBefore');
    t.true(b.body.pending === true || Date.now() >= startAt);

    await sleepUntil(startAt + 50);
    t.true((await check()).allowed, 'allowed once started');
    t.is(calls('roleBindings.create'), 1, 'the start needed no reconcile');

    // The start is set once: the CRD refuses to move it.
    const moved = await k
      .patch('RoleBinding', 'later', { notBefore: new Date(startAt + 60_000).toISOString() })
      .then(
        () => 'accepted',
        (e: { code?: number; body?: unknown }) => `${e.code} ${JSON.stringify(e.body)}`,
      );
    t.regex(moved, /^422 .*the start of a role binding is set once/);
  },
);
