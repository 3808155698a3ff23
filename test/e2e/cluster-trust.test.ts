import { pino } from 'pino';
import { ClusterTrust } from '../../src/reconciler/cluster-trust.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { reconcilerSuite } from '../helpers/controller.js';
import type { TestCluster } from '../helpers/kube.js';
import type { TestServer } from '../helpers/server.js';

let cluster: TestCluster;
let s: TestServer;
const maybe = reconcilerSuite('cluster trust e2e', (c, server) => {
  [cluster, s] = [c, server];
});

maybe(
  'cluster trust: a projected-style ServiceAccount token is exchanged with no manual trust setup',
  async (t) => {
    const trust = new ClusterTrust({
      kubeConfig: cluster.kc,
      trustedKeys: s.arbor.services.trustedKeys,
      logger: pino({ level: 'silent' }),
    });
    const { issuer, changed } = await trust.refresh();
    t.regex(issuer, /^https:\/\//);
    t.true(changed);
    t.false((await trust.refresh()).changed, 'an unchanged key set writes nothing');

    const ns = await cluster.namespace('trust');
    await cluster.kubectl(['-n', ns, 'create', 'serviceaccount', 'builder']);
    await cluster.kubectl(['-n', ns, 'create', 'serviceaccount', 'intruder']);
    const aud = s.arbor.config.issuerUrl;
    const token = (
      await cluster.kubectl(['-n', ns, 'create', 'token', 'builder', '--audience', aud])
    ).trim();
    const foreign = (
      await cluster.kubectl(['-n', ns, 'create', 'token', 'intruder', '--audience', aud])
    ).trim();

    const org = await createGroup(s.admin, 'cluster-org');
    const identity = await createIdentity(s.admin, org, 'builder', {
      issuer,
      subject: `system:serviceaccount:${ns}:builder`,
    });
    const viewer = (await s.admin.get('/iam/v2beta1/roles?name=viewer')).body.roles[0].uid;
    await createBinding(s.admin, org, identity, viewer);

    const q = new URLSearchParams({ aud, identity }).toString();
    const ok = await s.client(token).get(`/sts/exchange?${q}`);
    t.is(ok.status, 200, JSON.stringify(ok.body));
    const list = await s.client(ok.body.token).get('/iam/v2beta1/groups');
    t.is(list.status, 200);
    t.deepEqual(
      list.body.groups.map((g: { uid: string }) => g.uid),
      [org],
    );

    const refused = await s.client(foreign).get(`/sts/exchange?${q}`);
    t.is(refused.status, 403);
    t.is(refused.body.code, 7);
    t.false('token' in refused.body);

    const wrongAudience = (
      await cluster.kubectl([
        '-n',
        ns,
        'create',
        'token',
        'builder',
        '--audience',
        'https://kubernetes.default.svc',
      ])
    ).trim();
    t.is(
      (await s.client(wrongAudience).get(`/sts/exchange?${q}`)).status,
      403,
      'a token for another audience is refused',
    );
  },
);
