import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { parseAllDocuments, stringify } from 'yaml';
import { kubeAvailability, startCluster, type TestCluster } from '../helpers/kube.js';
import { needTool } from '../helpers/need-tool.js';

/**
 * deploy/overlays/ha against a real kube-apiserver: CloudNativePG's own CRDs (from its Go
 * module's source, fetched by scripts/cnpg-crds/fetch.sh) applied, then every object of the
 * overlay, the CNPG `Cluster` included, server-side dry-run: admission and the CRD's schema
 * judge it, as they would on a real cluster.
 */
type Doc = Record<string, any>;

const kube = kubeAvailability();
const version = /^readonly CNPG_VERSION=(\S+)/m.exec(
  readFileSync('scripts/cnpg-crds/fetch.sh', 'utf8'),
)?.[1];
const crds = join(
  process.env.ARBOR_CACHE ?? join(homedir(), '.cache/arbor'),
  `cnpg-${version}`,
  'crds',
);
const why = !kube.available
  ? kube.reason
  : !existsSync(join(crds, '.stamp'))
    ? `no CloudNativePG CRDs in ${crds}: run scripts/cnpg-crds/fetch.sh (needs Go and the module proxy)`
    : undefined;
const kubectlBin =
  kube.available && kube.mode === 'local' ? join(kube.binDir, 'kubectl') : 'kubectl';

const run = needTool(
  test.serial,
  kube.available ? 'CloudNativePG CRDs' : 'the Kubernetes control plane',
  why,
);

function build(dir: string): Doc[] {
  const out = execFileSync(kubectlBin, ['kustomize', dir], { encoding: 'utf8' });
  return parseAllDocuments(out).map((d) => d.toJS() as Doc);
}

const find = (docs: Doc[], kind: string, name: string) =>
  docs.find((d) => d.kind === kind && d.metadata?.name === name);

const envOf = (container: Doc) =>
  Object.fromEntries((container.env as Doc[]).map((e) => [e.name, e]));

let cluster: TestCluster;

test.before(async () => {
  if (why !== undefined) return;
  cluster = await startCluster(kube as Extract<typeof kube, { available: true }>);
  await cluster.kubectl(['apply', '--server-side', '-f', crds]);
  await cluster.kubectl([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/clusters.postgresql.cnpg.io',
  ]);
  // A dry-run creates nothing, so the overlay's namespaced objects need their namespace.
  await cluster.kubectl(['create', 'namespace', 'arbor-system']);
});

test.after.always(async () => {
  await cluster?.close();
});

run('deploy: the ha overlay wires the API to CloudNativePG and spreads it', (t) => {
  const docs = build('deploy/overlays/ha');
  const pg = find(docs, 'Cluster', 'arbor-db')!;
  t.is(pg.apiVersion, 'postgresql.cnpg.io/v1');
  t.is(pg.spec.instances, 3);
  t.is(pg.spec.postgresql.synchronous.number, 1);
  t.is(pg.spec.postgresql.synchronous.dataDurability, 'required');

  const api = find(docs, 'Deployment', 'arbor-api')!.spec;
  t.true(api.replicas >= 3);
  const c = api.template.spec.containers[0];
  const env = envOf(c);
  // The operator's app Secret (<cluster>-app) and services (<cluster>-rw, <cluster>-ro).
  t.deepEqual(env.DATABASE_URL.valueFrom.secretKeyRef, { name: 'arbor-db-app', key: 'uri' });
  t.regex(env.DATABASE_READ_URL.value, /@arbor-db-ro:5432\/arbor$/);
  // $(VAR) is expanded only from variables defined earlier in the list.
  const names = (c.env as Doc[]).map((e) => e.name);
  for (const v of ['ARBOR_DB_USER', 'ARBOR_DB_PASSWORD'])
    t.true(names.indexOf(v) < names.indexOf('DATABASE_READ_URL'), v);
  t.is(env.ARBOR_SIGNING_KEYS_DIR.value, '/etc/arbor/signing-keys');
  t.is(
    api.template.spec.volumes.find((v: Doc) => v.name === 'signing-keys').secret.secretName,
    'arbor-signing-keys',
  );
  t.deepEqual(
    api.template.spec.topologySpreadConstraints.map((x: Doc) => x.topologyKey),
    ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'],
  );
  // Base's probes survive the patch.
  t.is(c.readinessProbe.httpGet.path, '/readyz');

  const pdb = find(docs, 'PodDisruptionBudget', 'arbor-api')!;
  t.deepEqual(pdb.spec.selector.matchLabels, api.selector.matchLabels);
  const hpa = find(docs, 'HorizontalPodAutoscaler', 'arbor-api')!;
  t.is(hpa.spec.scaleTargetRef.name, 'arbor-api');
  t.is(hpa.spec.metrics[0].resource.name, 'cpu');
  t.true(hpa.spec.minReplicas >= 3);

  for (const [kind, name] of [
    ['Deployment', 'arbor-reconciler'],
    ['Job', 'arbor-migrate'],
  ] as const) {
    const spec = find(docs, kind, name)!.spec.template.spec;
    const e = envOf(spec.containers[0]);
    t.deepEqual(e.DATABASE_URL.valueFrom.secretKeyRef, { name: 'arbor-db-app', key: 'uri' }, name);
    t.is(e.DATABASE_READ_URL, undefined, `${name} reads the primary only`);
  }
  // Nothing still expects the base's hand-made arbor-db Secret.
  t.false(JSON.stringify(docs).includes('"name":"arbor-db","key"'));
});

run(
  'deploy: the ha overlay passes server-side dry-run with CloudNativePG v1.28.0 CRDs',
  async (t) => {
    const rendered = execFileSync(kubectlBin, ['kustomize', 'deploy/overlays/ha'], {
      encoding: 'utf8',
    });
    const out = await cluster.kubectl(
      ['apply', '--dry-run=server', '--validate=strict', '-f', '-'],
      rendered,
    );
    t.regex(out, /cluster\.postgresql\.cnpg\.io\/arbor-db created \(server dry run\)/);
    t.regex(out, /horizontalpodautoscaler\.autoscaling\/arbor-api created \(server dry run\)/);
    t.regex(out, /poddisruptionbudget\.policy\/arbor-api created \(server dry run\)/);
    t.regex(out, /deployment\.apps\/arbor-api created \(server dry run\)/);

    // The schema is really in force: a Cluster it does not allow is refused.
    const bad = structuredClone(find(build('deploy/overlays/ha'), 'Cluster', 'arbor-db')!);
    bad.spec.postgresql.synchronous.method = 'sometimes';
    const refused = await cluster
      .kubectl(['apply', '--dry-run=server', '-f', '-'], stringify(bad))
      .then(
        () => undefined,
        (e: Error & { stderr?: string }) => e.stderr ?? e.message,
      );
    t.regex(refused ?? 'accepted', /synchronous\.method|Unsupported value/);
  },
);
