import type { ExecutionContext } from 'ava';
import { createStores } from '../../src/db/stores/index.js';
import { KnexUnitOfWork } from '../../src/db/unit-of-work.js';
import { BindingExpirySweeper } from '../../src/resources/role-bindings/binding-expiry-sweeper.js';
import { condition, crs, eventually, type TestCluster } from '../helpers/kube.js';
import { reconcilerSuite, startController } from '../helpers/controller.js';
import type { TestServer } from '../helpers/server.js';
import { NO_AUDIT } from '../../src/resources/audit/audit-log.js';

/**
 * The reconciler against a real kube-apiserver: a RoleBinding custom resource with an
 * `expireTime`. Once the binding has expired and the sweeper has removed it, the next
 * resync must not bind again: the object says Ready=False, reason Expired, with an Event.
 */
let cluster: TestCluster;
let server: TestServer;
const maybe = reconcilerSuite('reconciler expiry e2e', (c, s) => {
  [cluster, server] = [c, s];
});

const controllerFor = (t: ExecutionContext, ns: string) =>
  startController(t, cluster, server, ns, { adminNamespaces: [ns] });

maybe('reconciler: a RoleBinding whose expired binding was swept is not bound again', async (t) => {
  const ns = await cluster.namespace('expiry');
  const k = crs(cluster, ns);
  const { controller, calls } = controllerFor(t, ns);
  await k.apply('Group', 'org', {});
  await k.apply('Identity', 'bot', {
    groupRef: { name: 'org' },
    claimMatch: { issuer: 'https://issuer.example', subject: 'system:serviceaccount:ci:bot' },
  });
  await k.ready('Identity', 'bot');
  const expireTime = new Date(Date.now() + 4_000).toISOString();
  await k.apply('RoleBinding', 'brief', {
    groupRef: { name: 'org' },
    identityRef: { name: 'bot' },
    role: 'viewer',
    expireTime,
  });
  const bound = await k.ready('RoleBinding', 'brief');
  const uid = bound.status.uid as string;
  t.is(calls('roleBindings.create'), 1);

  // Past its expiry, the sweeper (retention 0 here) deletes the binding ...
  await new Promise((r) => setTimeout(r, Date.parse(expireTime) - Date.now() + 100));
  const sweeper = new BindingExpirySweeper({
    uow: new KnexUnitOfWork(server.arbor.db.knex),
    bindings: createStores().roleBindings,
    authz: server.arbor.authz,
    audit: NO_AUDIT,
    retentionMs: 0,
    intervalMs: 3_600_000,
  });
  t.is(await sweeper.sweep(), 1);
  t.is((await server.admin.get(`/iam/v2beta1/roleBindings/${uid}`)).status, 404);

  // ... and a resync refuses to make it again, saying why.
  await controller.resyncNow();
  const expired = await k.waitFor(
    'RoleBinding',
    'brief',
    (o) => condition(o, 'Ready')?.reason === 'Expired',
  );
  t.is(condition(expired, 'Ready').status, 'False');
  t.regex(condition(expired, 'Ready').message, /was removed; it is not created again/);
  await eventually('an Expired event', async () => {
    const e = await k.events('brief');
    return e.some((x) => x.type === 'Warning' && x.reason === 'Expired') ? true : undefined;
  });
  t.is(calls('roleBindings.create'), 1, 'no second binding was created');
});
