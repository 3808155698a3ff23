import { parseAllDocuments } from 'yaml';
import { systemPrincipal } from '../../src/auth/principal.js';
import { exportTree } from '../../src/cli/export.js';
import { builtinRole } from '../helpers/authority.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { crs, type Kind, type TestCluster } from '../helpers/kube.js';
import { reconcilerSuite, startController } from '../helpers/controller.js';
import type { TestServer } from '../helpers/server.js';

/**
 * `arbor export` round trip on the real control plane: a tree built through REST,
 * exported as custom resources, applied with kubectl, is adopted as it is — every object
 * Ready with the uid it had, and not one create, update or delete call to the services.
 */
let cluster: TestCluster;
let server: TestServer;
const maybe = reconcilerSuite('export e2e', (c, s) => {
  [cluster, server] = [c, s];
});

maybe('export: a REST-built tree applied with kubectl is adopted with no writes', async (t) => {
  const a = server.admin;
  const org = await createGroup(a, 'export org_1', undefined, 'built by hand');
  const folder = await createGroup(a, 'platform', org, 'the platform team');
  const sub = await createGroup(a, 'platform', folder); // same name one level down
  const bot = await createIdentity(a, folder, 'deployer', {
    issuer: 'https://token.actions.githubusercontent.com',
    subjectPattern: 'repo:acme/.*',
    audience: 'arbor',
  });
  await createBinding(a, sub, bot, await builtinRole(a, 'viewer'));
  await createBinding(a, org, bot, await builtinRole(a, 'editor'));
  const rest = async () =>
    JSON.stringify(
      await Promise.all([
        a.get(`/iam/v2beta1/groups?uidp.descendants_of=${org}`),
        a.get(`/iam/v2beta1/groups/${org}`),
        a.get(`/iam/v2beta1/identities?uidp.descendants_of=${org}`),
        a.get(`/iam/v2beta1/roleBindings?uidp.descendants_of=${org}`),
      ]).then((rs) => rs.map((r) => r.body)),
    );
  const before = await rest();

  const ns = await cluster.namespace('export');
  const { yaml, skipped } = await exportTree(
    server.arbor.services,
    systemPrincipal('export'),
    org,
    ns,
  );
  t.deepEqual(skipped, []);
  const docs = parseAllDocuments(yaml).map((d) => d.toJS());
  t.deepEqual(
    docs.map((d) => d.kind),
    ['Group', 'Group', 'Group', 'Identity', 'RoleBinding', 'RoleBinding'],
  );
  t.true(
    docs.every((d) => d.metadata.namespace === ns && d.spec.adoptUid),
    'namespaced, adopting',
  );

  // The tree's root is an organization: the namespace acts as the administrator.
  const counted = startController(t, cluster, server, ns, { adminNamespaces: [ns] });
  await cluster.kubectl(['apply', '-f', '-'], yaml);
  const k = crs(cluster, ns);
  for (const d of docs) {
    const obj = await k.ready(d.kind as Kind, d.metadata.name);
    t.is(obj.status.uid, d.spec.adoptUid, `${d.kind} ${d.metadata.name} kept its uid`);
  }
  t.is(counted.writes(), 0, 'no create, update or delete');
  t.is(await rest(), before, 'Arbor shows exactly what it showed before');
  // From now on the tree is the objects': REST writes are refused.
  t.is((await a.patch(`/iam/v2beta1/groups/${folder}`, { description: 'x' })).status, 400);
});
