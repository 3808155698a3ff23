import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import test from 'ava';
import { parseAllDocuments } from 'yaml';
import { kubeAvailability } from '../helpers/kube.js';
import { needTool } from '../helpers/need-tool.js';

const kube = kubeAvailability();
const kubectl = kube.available && kube.mode === 'local' ? join(kube.binDir, 'kubectl') : undefined;

type Doc = Record<string, any>;

function build(dir: string): Doc[] {
  const out = execFileSync(kubectl!, ['kustomize', dir], { encoding: 'utf8' });
  return parseAllDocuments(out).map((d) => d.toJS() as Doc);
}

const find = (docs: Doc[], kind: string, name: string) =>
  docs.find((d) => d.kind === kind && d.metadata?.name === name);

const maybe = needTool(
  test,
  'the Kubernetes control plane',
  kubectl ? undefined : kube.available ? 'needs a local control plane' : kube.reason,
);

maybe('deploy: base probes, drains and spreads the way the lifecycle expects', (t) => {
  const docs = build('deploy/base');
  const api = find(docs, 'Deployment', 'arbor-api')!.spec.template.spec;
  const c = api.containers[0];
  t.is(c.startupProbe.httpGet.path, '/startupz');
  t.is(c.livenessProbe.httpGet.path, '/healthz');
  t.is(c.readinessProbe.httpGet.path, '/readyz');
  t.true(api.terminationGracePeriodSeconds >= 5 + 20, 'grace covers delay + drain timeout');
  const rec = find(docs, 'Deployment', 'arbor-reconciler')!.spec.template.spec;
  t.truthy(rec.containers[0].startupProbe);
  t.deepEqual(
    rec.topologySpreadConstraints.map((x: Doc) => x.topologyKey),
    ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'],
  );
  const pdb = find(docs, 'PodDisruptionBudget', 'arbor-reconciler')!;
  t.is(pdb.spec.minAvailable, 1);
  t.deepEqual(pdb.spec.selector.matchLabels, {
    'app.kubernetes.io/name': 'arbor',
    'app.kubernetes.io/component': 'reconciler',
  });
});

maybe('deploy: the reconciler is granted only the verbs it uses', (t) => {
  const role = find(build('deploy/base'), 'ClusterRole', 'arbor-reconciler')!;
  const verbs = Object.fromEntries(
    role.rules.map((r: Doc) => [(r.resources ?? r.nonResourceURLs).join(','), r.verbs.join(',')]),
  );
  t.is(verbs['groups,identities,rolebindings'], 'get,list,watch,patch');
  t.is(verbs['groups/status,identities/status,rolebindings/status'], 'patch');
  t.is(verbs.events, 'create,patch');
  t.is(verbs.namespaceauthorities, 'get,list,watch');
  t.false(JSON.stringify(role.rules).includes('update'));
  t.false(JSON.stringify(role.rules).includes('finalizers'));
});

maybe(
  'deploy: the namespaced overlay swaps the ClusterRole for a Role and watches one namespace',
  (t) => {
    const docs = build('deploy/overlays/namespaced');
    t.is(find(docs, 'ClusterRole', 'arbor-reconciler'), undefined);
    t.is(find(docs, 'ClusterRoleBinding', 'arbor-reconciler'), undefined);
    // At cluster scope only the read of the cluster-scoped NamespaceAuthority objects.
    t.deepEqual(
      docs.filter((d) => d.kind.startsWith('Cluster')).map((d) => `${d.kind}/${d.metadata.name}`),
      [
        'ClusterRole/arbor-reconciler-authorities',
        'ClusterRoleBinding/arbor-reconciler-authorities',
      ],
    );
    t.deepEqual(find(docs, 'ClusterRole', 'arbor-reconciler-authorities')!.rules, [
      {
        apiGroups: ['arbor.dev'],
        resources: ['namespaceauthorities'],
        verbs: ['get', 'list', 'watch'],
      },
    ]);
    const role = find(docs, 'Role', 'arbor-reconciler')!;
    t.is(role.metadata.namespace, 'arbor-system');
    const binding = find(docs, 'RoleBinding', 'arbor-reconciler')!;
    t.is(binding.subjects[0].namespace, 'arbor-system');
    const env = find(docs, 'Deployment', 'arbor-reconciler')!.spec.template.spec.containers[0].env;
    const watch = env.find((e: Doc) => e.name === 'ARBOR_WATCH_NAMESPACE');
    t.is(watch.valueFrom.fieldRef.fieldPath, 'metadata.namespace');
  },
);

maybe('deploy: the monitoring overlay scrapes both processes on their metrics port', (t) => {
  const docs = build('deploy/overlays/monitoring');
  const sm = find(docs, 'ServiceMonitor', 'arbor')!;
  t.is(sm.spec.endpoints[0].port, 'metrics');
  const scraped = docs.filter(
    (d) =>
      d.kind === 'Service' &&
      Object.entries(sm.spec.selector.matchLabels).every(([k, v]) => d.metadata.labels?.[k] === v),
  );
  t.deepEqual(scraped.map((d) => d.spec.selector['app.kubernetes.io/component']).sort(), [
    'api',
    'reconciler',
  ]);
  for (const name of ['arbor-api', 'arbor-reconciler']) {
    const ports = find(docs, 'Deployment', name)!.spec.template.spec.containers[0].ports;
    t.true(
      ports.some((p: Doc) => p.name === 'metrics' && p.containerPort === 9464),
      name,
    );
  }
});

maybe('deploy: the tls overlay mounts the Secret as a directory and probes over https', (t) => {
  const docs = build('deploy/overlays/tls');
  const api = find(docs, 'Deployment', 'arbor-api')!.spec.template.spec;
  const c = api.containers[0];
  const env = Object.fromEntries(c.env.map((e: Doc) => [e.name, e.value]));
  t.is(env.ARBOR_TLS_CERT_FILE, '/etc/arbor/tls/tls.crt');
  t.is(env.ARBOR_TLS_KEY_FILE, '/etc/arbor/tls/tls.key');
  t.is(env.ARBOR_ISSUER_URL, 'https://arbor.arbor-system.svc:8080');
  // A subPath mount would never see a renewed certificate.
  const mount = c.volumeMounts.find((m: Doc) => m.name === 'tls');
  t.is(mount.mountPath, '/etc/arbor/tls');
  t.is(mount.subPath, undefined);
  t.is(api.volumes.find((v: Doc) => v.name === 'tls').secret.secretName, 'arbor-tls');
  for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe'])
    t.is(c[probe].httpGet.scheme, 'HTTPS', probe);
  // Base's other settings survive the patch.
  t.is(env.DATA_DIR, '/data');
  t.is(c.readinessProbe.httpGet.path, '/readyz');
  const rec = find(docs, 'Deployment', 'arbor-reconciler')!.spec.template.spec.containers[0];
  t.is(
    rec.env.find((e: Doc) => e.name === 'ARBOR_ISSUER_URL').value,
    'https://arbor.arbor-system.svc:8080',
  );
});
