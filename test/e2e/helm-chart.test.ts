import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { parse, parseAllDocuments } from 'yaml';
import { kubeAvailability, startCluster, type TestCluster } from '../helpers/kube.js';
import { needTool } from '../helpers/need-tool.js';

/**
 * The Helm chart (deploy/helm/arbor) against the kustomize manifests it mirrors and a real
 * kube-apiserver: `helm lint`; `helm template` with default values renders the same objects
 * as `kubectl kustomize deploy/base` (names, kinds, specs; only Helm's own labels and hook
 * annotations differ), values-ha.yaml the same as deploy/overlays/ha; the CRDs only when
 * crds.enabled, kept on uninstall when crds.keep; and the output passes
 * `kubectl apply --dry-run=server` with and without the CRDs.
 */
type Doc = Record<string, any>;

const run = promisify(execFile);
const chart = 'deploy/helm/arbor';
const helmVersion = /^readonly VERSION=(\S+)/m.exec(
  readFileSync('scripts/helm/build.sh', 'utf8'),
)?.[1];
const helm = join(
  process.env.ARBOR_CACHE ?? join(homedir(), '.cache/arbor'),
  'helm',
  helmVersion ?? '?',
  'helm',
);
const kube = kubeAvailability();
const kubectl = kube.available && kube.mode === 'local' ? join(kube.binDir, 'kubectl') : 'kubectl';
const why = !kube.available
  ? kube.reason
  : !existsSync(helm)
    ? `no helm at ${helm}: run scripts/helm/build.sh (needs Go and the module proxy)`
    : undefined;
const check = needTool(test.serial, kube.available ? 'helm' : 'the Kubernetes control plane', why);

/** `helm template` as the docs install it: release "arbor" in arbor-system. */
async function template(args: string[] = [], namespace = 'arbor-system'): Promise<string> {
  const { stdout } = await run(helm, ['template', 'arbor', chart, '-n', namespace, ...args]);
  return stdout;
}

const docsOf = (yaml: string): Doc[] =>
  parseAllDocuments(yaml)
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null);

const kustomize = (dir: string) =>
  docsOf(execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8' }));

const HELM_LABELS = [
  'helm.sh/chart',
  'app.kubernetes.io/managed-by',
  'app.kubernetes.io/instance',
  'app.kubernetes.io/version',
];
const HELM_ANNOTATIONS = ['helm.sh/hook', 'helm.sh/hook-delete-policy', 'helm.sh/resource-policy'];

/**
 * Lists whose order means nothing to Kubernetes: kustomize's strategic merge puts a patch's
 * new entries first, the chart appends them. (Env order does matter for `$(VAR)`
 * references; the last test checks those separately.)
 */
const BY_NAME = new Set(['env', 'volumes', 'volumeMounts']);

/** A key-sorted copy, so that two renderings compare regardless of key and such order. */
function sorted(v: unknown, key = ''): unknown {
  if (Array.isArray(v)) {
    const items = v.map((x) => sorted(x));
    if (!BY_NAME.has(key)) return items;
    return items.sort((a, b) => String((a as Doc).name).localeCompare(String((b as Doc).name)));
  }
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.keys(v as Doc)
      .sort()
      .map((k) => [k, sorted((v as Doc)[k], k)]),
  );
}

/** An object without what only Helm adds (its labels, its hook and keep annotations). */
function withoutHelm(doc: Doc): Doc {
  const d = structuredClone(doc);
  const meta = d.metadata ?? {};
  for (const k of HELM_LABELS) delete meta.labels?.[k];
  for (const k of HELM_ANNOTATIONS) delete meta.annotations?.[k];
  if (meta.annotations && Object.keys(meta.annotations).length === 0) delete meta.annotations;
  return sorted(d) as Doc;
}

const keyOf = (d: Doc) => `${d.kind}/${d.metadata?.namespace ?? ''}/${d.metadata?.name}`;
const byKey = (docs: Doc[]) => new Map(docs.map((d) => [keyOf(d), withoutHelm(d)]));

let cluster: TestCluster | undefined;

test.before(async () => {
  if (why !== undefined) return;
  cluster = await startCluster(kube as Extract<typeof kube, { available: true }>);
});

test.after.always(async () => {
  await cluster?.close();
});

check('helm: the chart lints, with default, HA and CRD values', async (t) => {
  for (const args of [[], ['-f', `${chart}/values-ha.yaml`], ['--set', 'crds.enabled=true']]) {
    const { stdout } = await run(helm, ['lint', '--strict', chart, ...args]);
    t.regex(stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/, args.join(' '));
  }
});

check('helm: values.schema.json refuses values of the wrong shape', async (t) => {
  for (const bad of [
    ['--set', 'api.replicas=lots'],
    ['--set', 'crds.enabled=maybe'],
    ['--set', 'image.pullPolicy=Sometimes'],
    ['--set', 'apii.replicas=2'],
  ]) {
    const err = await template(bad).then(
      () => 'rendered',
      (e: Error & { stderr?: string }) => e.stderr ?? e.message,
    );
    t.regex(err, /values don't meet the specifications of the schema/, bad.join(' '));
  }
});

check(
  'helm: default values render exactly the objects of kustomize build deploy/base',
  async (t) => {
    const chartDocs = byKey(docsOf(await template()));
    const base = byKey(kustomize('deploy/base'));
    t.deepEqual([...chartDocs.keys()].sort(), [...base.keys()].sort());
    for (const [key, doc] of base) t.deepEqual(chartDocs.get(key), doc, key);
  },
);

check('helm: values-ha.yaml renders exactly the objects of deploy/overlays/ha', async (t) => {
  const chartDocs = byKey(docsOf(await template(['-f', `${chart}/values-ha.yaml`])));
  const ha = byKey(kustomize('deploy/overlays/ha'));
  t.deepEqual([...chartDocs.keys()].sort(), [...ha.keys()].sort());
  for (const [key, doc] of ha) t.deepEqual(chartDocs.get(key), doc, key);
  // $(VAR) in a value expands only from variables defined earlier in the list.
  for (const d of docsOf(await template(['-f', `${chart}/values-ha.yaml`]))) {
    for (const c of d.spec?.template?.spec?.containers ?? []) {
      const names = (c.env ?? []).map((e: Doc) => e.name as string);
      (c.env ?? []).forEach((e: Doc, i: number) => {
        for (const [, v] of String(e.value ?? '').matchAll(/\$\((\w+)\)/g))
          t.true(names.indexOf(v!) >= 0 && names.indexOf(v!) < i, `${d.metadata.name}: ${v}`);
      });
    }
  }
});

check(
  'helm: CRDs only when crds.enabled, the same as crds/, kept on uninstall by default',
  async (t) => {
    const crdsOf = (docs: Doc[]) => docs.filter((d) => d.kind === 'CustomResourceDefinition');
    t.deepEqual(crdsOf(docsOf(await template())), [], 'none by default');

    const kept = crdsOf(docsOf(await template(['--set', 'crds.enabled=true'])));
    const repo = readdirSync('crds')
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => parse(readFileSync(join('crds', f), 'utf8')) as Doc);
    t.deepEqual(
      new Map(kept.map((d) => [d.metadata.name, withoutHelm(d)])),
      new Map(repo.map((d) => [d.metadata.name, sorted(d)])),
    );
    for (const d of kept) t.is(d.metadata.annotations?.['helm.sh/resource-policy'], 'keep');

    const dropped = crdsOf(
      docsOf(await template(['--set', 'crds.enabled=true', '--set', 'crds.keep=false'])),
    );
    t.is(dropped.length, repo.length);
    for (const d of dropped) t.is(d.metadata.annotations?.['helm.sh/resource-policy'], undefined);
  },
);

check('helm: the chart passes server-side dry-run, without and with its CRDs', async (t) => {
  // A dry-run creates nothing, so the namespaced objects need a namespace that exists.
  const ns = await cluster!.namespace('helm');
  for (const args of [[], ['--set', 'crds.enabled=true']]) {
    const rendered = await template(['--set', 'namespace.create=false', ...args], ns);
    const out = await cluster!.kubectl(
      ['apply', '--dry-run=server', '--validate=strict', '-f', '-'],
      rendered,
    );
    t.regex(out, /deployment\.apps\/arbor-api created \(server dry run\)/);
    t.regex(out, /clusterrole\.rbac\.authorization\.k8s\.io\/arbor-reconciler created/);
    t.regex(out, /job\.batch\/arbor-migrate created/);
    const crdLines = out.split('\n').filter((l) => l.startsWith('customresourcedefinition'));
    t.is(crdLines.length, args.length === 0 ? 0 : 4, args.join(' '));
  }
  // The apiserver really judges: a chart value it cannot accept is refused.
  const bad = await template(
    ['--set', 'namespace.create=false', '--set', 'api.resources.requests.cpu=lots'],
    ns,
  );
  const refused = await cluster!.kubectl(['apply', '--dry-run=server', '-f', '-'], bad).then(
    () => 'accepted',
    (e: Error & { stderr?: string }) => e.stderr ?? e.message,
  );
  t.regex(refused, /quantities must match the regular expression/);
});
