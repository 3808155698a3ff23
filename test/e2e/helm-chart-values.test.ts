import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { parseAllDocuments } from 'yaml';
import { needTool } from '../helpers/need-tool.js';

/**
 * The chart's optional values render where they belong: the read replica's URL from a
 * Secret (never a plain value once a Secret is named), scheduling and pull secrets on every
 * pod, service-account annotations, and the NetworkPolicy only when enabled.
 */
type Doc = Record<string, any>;
const chart = 'deploy/helm/arbor';
const version = /^readonly VERSION=(\S+)/m.exec(readFileSync('scripts/helm/build.sh', 'utf8'))?.[1];
const helm = join(
  process.env.ARBOR_CACHE ?? join(homedir(), '.cache/arbor'),
  'helm',
  version ?? '?',
  'helm',
);
const check = needTool(
  test,
  'helm',
  existsSync(helm) ? undefined : `no helm at ${helm}: run scripts/helm/build.sh`,
);

function render(...set: string[]): Doc[] {
  const out = execFileSync(
    helm,
    ['template', 't', chart, ...set.flatMap((s) => ['--set-json', s])],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  return parseAllDocuments(out)
    .map((d) => d.toJS() as Doc)
    .filter((d) => d !== null);
}

const pods = (docs: Doc[]) =>
  docs.filter((d) => d.kind === 'Deployment' || d.kind === 'Job').map((d) => d.spec.template.spec);

check('chart: the read URL comes from a Secret when one is named', (t) => {
  const docs = render(
    'database.readUrl="postgresql://u:p@replica/arbor"',
    'database.readUrlSecret={"name":"replica","key":"URL"}',
  );
  const api = docs.find((d) => d.kind === 'Deployment' && d.metadata.name === 't-arbor-api');
  const env = (api?.spec.template.spec.containers[0].env ?? []) as Doc[];
  const read = env.find((e) => e.name === 'DATABASE_READ_URL');
  t.deepEqual(read, {
    name: 'DATABASE_READ_URL',
    valueFrom: { secretKeyRef: { name: 'replica', key: 'URL' } },
  });
  t.false(JSON.stringify(docs).includes('u:p@replica'), 'the password is in no object');
});

check('chart: scheduling, pull secrets and service-account annotations, on every pod', (t) => {
  const docs = render(
    'nodeSelector={"pool":"iam"}',
    'tolerations=[{"key":"dedicated","operator":"Exists","effect":"NoSchedule"}]',
    'affinity={"podAntiAffinity":{}}',
    'imagePullSecrets=[{"name":"regcred"}]',
    'serviceAccount={"annotations":{"example.com/role":"arbor"}}',
  );
  const specs = pods(docs);
  t.true(specs.length >= 3);
  for (const s of specs) {
    t.deepEqual(s.nodeSelector, { pool: 'iam' });
    t.deepEqual(s.imagePullSecrets, [{ name: 'regcred' }]);
    t.is(s.tolerations[0].key, 'dedicated');
    t.deepEqual(s.affinity, { podAntiAffinity: {} });
  }
  for (const sa of docs.filter((d) => d.kind === 'ServiceAccount'))
    t.is(sa.metadata.annotations?.['example.com/role'], 'arbor');
  // None of it by default.
  for (const s of pods(render())) {
    t.is(s.nodeSelector, undefined);
    t.is(s.imagePullSecrets, undefined);
  }
});

check('chart: the NetworkPolicy is off by default, and admits only its peers when on', (t) => {
  t.false(render().some((d) => d.kind === 'NetworkPolicy'));
  const policy = render(
    'networkPolicy={"enabled":true,"from":[{"namespaceSelector":{"matchLabels":{"team":"platform"}}}]}',
  ).find((d) => d.kind === 'NetworkPolicy');
  t.truthy(policy);
  t.deepEqual(policy!.spec.ingress[0].from, [
    { namespaceSelector: { matchLabels: { team: 'platform' } } },
  ]);
  t.deepEqual(
    policy!.spec.ingress[0].ports.map((p: Doc) => p.port),
    [8080, 9464],
  );
});
