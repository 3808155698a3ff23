import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { decodeJwt } from 'jose';
import { createGroup } from '../helpers/fixtures.js';
import { createIdentity } from '../helpers/iam-fixtures.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import {
  crane,
  randomLayer,
  registryTools,
  startRegistryFor,
  type RunningRegistry,
} from '../helpers/registry.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { needTool } from '../helpers/need-tool.js';

/**
 * A conditional role binding decides pushes through a stock Distribution registry: a CI
 * workload identity holds `registry.push` at its organization only while its upstream
 * token says `ref` is main, and only for repositories under `platform/images` (whose
 * registry path is the images folder's uid path: docs/registry.md). crane pushes with the
 * workload's own OIDC token (the identity uid as username) and with the API token the STS
 * gives for it; the registry admits exactly what the condition allows, and the check API
 * shows the condition and the values it read.
 */
const tools = registryTools();
const maybe = needTool(
  test.serial,
  'registry and crane',
  tools.available ? undefined : tools.reason,
);

const SERVICE = 'registry.conditions.local';
const NOTIFY = 'conditions-notify-secret-0123456789';
const MAIN = 'refs/heads/main';

let s: TestServer;
let issuer: TestIssuer;
let reg: RunningRegistry;
let dir: string;
let images: string;
let tools_: string;
let ci: string;
let expression: string;
let layer: string;

test.before(async () => {
  if (!tools.available) return;
  dir = mkdtempSync(join(tmpdir(), 'arbor-registry-conditions-'));
  s = await startServer({
    ARBOR_ALLOW_INSECURE_ISSUERS: 'true',
    ARBOR_REGISTRY_SERVICE: SERVICE,
    ARBOR_REGISTRY_NOTIFY_TOKEN: NOTIFY,
  });
  issuer = await TestIssuer.start();
  const org = await createGroup(s.admin, 'acme-rc');
  const platform = await createGroup(s.admin, 'platform', org);
  images = await createGroup(s.admin, 'images', platform);
  tools_ = await createGroup(s.admin, 'tools', platform);
  ci = await createIdentity(s.admin, org, 'ci', {
    issuer: issuer.url,
    subject: 'repo:acme/platform',
  });
  // `<org>/platform/images/` by the registry's path syntax: the images folder's uid path.
  expression = `token.claims.ref == "${MAIN}" && resource.name.startsWith("${images}/")`;
  const bound = await s.admin.post(`/iam/v2beta1/roleBindings/${org}`, {
    identityUid: ci,
    roleUid: await builtinRoleUid(s.admin, 'registry.push'),
    condition: { expression, title: 'main builds push images' },
  });
  if (bound.status !== 200) throw new Error(JSON.stringify(bound.body));
  reg = await startRegistryFor(s, {
    binary: tools.registry,
    dir: join(dir, 'registry'),
    service: SERVICE,
    notifyToken: NOTIFY,
  });
  layer = randomLayer(dir);
});

test.after.always(async () => {
  if (!tools.available) return;
  if (process.env.ARBOR_TEST_VERBOSE) console.log(reg?.log());
  await reg?.stop();
  await issuer?.stop();
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ref = (repo: string, tag: string) => `${reg.host}/${repo}:${tag}`;

/** The CI workload's OIDC token for a build of `branch` (GitHub-like claims). */
function workload(branch: string): Promise<string> {
  return issuer.mint({
    sub: 'repo:acme/platform',
    aud: s.arbor.config.issuerUrl,
    ref: branch,
    repository: 'acme/platform',
  });
}

/** crane, logged in to the registry as `username` with `password`, in its own config dir. */
async function craneAs(name: string, username: string, password: string, args: string[]) {
  const bin = tools.available ? tools.crane : '';
  const cfg = join(dir, 'docker', name);
  const login = await crane(bin, cfg, ['auth', 'login', reg.host, '-u', username, '-p', password]);
  if (login.code !== 0) throw new Error(`crane auth login: ${login.stderr}`);
  return crane(bin, cfg, args);
}

/** The registry refused (crane's wording depends on its order of requests: see registry.test.ts). */
const REFUSED = /UNAUTHORIZED|DENIED|401|403|ContentLength=\d+ with Body length 0/;

maybe('a main build pushes under platform/images with its workload token', async (t) => {
  const pushed = await craneAs('main', ci, await workload(MAIN), [
    'append',
    '-f',
    layer,
    '-t',
    ref(`${images}/app`, 'v1'),
  ]);
  t.is(pushed.code, 0, `${pushed.stderr}\n${reg.log().slice(-3000)}`);
  t.regex(pushed.stdout, /sha256:[0-9a-f]{64}/);
});

maybe('a main build pushes with the API token the STS gives for its workload token', async (t) => {
  const q = new URLSearchParams({ aud: s.arbor.config.issuerUrl, identity: ci });
  const sts = await s.client(await workload(MAIN)).get(`/sts/exchange?${q.toString()}`);
  t.is(sts.status, 200);
  t.like(decodeJwt(sts.body.token as string).arbor_claims, { ref: MAIN });
  const pushed = await craneAs('main-api', '_token', sts.body.token as string, [
    'append',
    '-f',
    layer,
    '-t',
    ref(`${images}/app`, 'v2'),
  ]);
  t.is(pushed.code, 0, pushed.stderr);
});

maybe("another branch's build is refused the same push", async (t) => {
  const refused = await craneAs('dev', ci, await workload('refs/heads/dev'), [
    'append',
    '-f',
    layer,
    '-t',
    ref(`${images}/app`, 'dev'),
  ]);
  t.not(refused.code, 0);
  t.regex(refused.stderr, REFUSED, refused.stderr);
  // It may not even pull: the binding is all it has, and its condition does not hold.
  const pulled = await craneAs('dev', ci, await workload('refs/heads/dev'), [
    'digest',
    ref(`${images}/app`, 'v1'),
  ]);
  t.not(pulled.code, 0);
});

maybe('a main build is refused a push outside platform/images', async (t) => {
  const refused = await craneAs('main-tools', ci, await workload(MAIN), [
    'append',
    '-f',
    layer,
    '-t',
    ref(`${tools_}/app`, 'v1'),
  ]);
  t.not(refused.code, 0);
  t.regex(refused.stderr, REFUSED, refused.stderr);
  // Nothing was written there: the registry has no such manifest.
  const none = await craneAs('main-tools', ci, await workload(MAIN), [
    'digest',
    ref(`${tools_}/app`, 'v1'),
  ]);
  t.not(none.code, 0);
});

maybe('the check API shows the condition and the values it read', async (t) => {
  const check = await s.admin.post('/iam/v2beta1/access:check', {
    identityUid: ci,
    capability: 'manifest.create',
    groupUid: images,
  });
  t.is(check.status, 200, JSON.stringify(check.body));
  // The check has no token of the identity's to read: it cannot grant by this condition,
  // and says which condition would grant and what it saw.
  t.false(check.body.allowed);
  const c = check.body.conditional?.[0]?.condition;
  t.like(c, { expression, title: 'main builds push images', result: false });
  t.true('token.claims' in (c?.values ?? {}), JSON.stringify(c));
  t.true('resource.name' in (c?.values ?? {}), JSON.stringify(c));
});

maybe('a check naming the refused push (its claims and repository) shows why', async (t) => {
  // The claims the STS would carry for the dev build's token, and the path crane pushed to.
  const q = new URLSearchParams({ aud: s.arbor.config.issuerUrl, identity: ci });
  const sts = await s.client(await workload('refs/heads/dev')).get(`/sts/exchange?${q.toString()}`);
  t.is(sts.status, 200);
  const claims = decodeJwt(sts.body.token as string).arbor_claims as Record<string, unknown>;
  const ask = (c: Record<string, unknown>, name: string) =>
    s.admin.post('/iam/v2beta1/access:check', {
      identityUid: ci,
      capability: 'manifest.create',
      groupUid: images,
      resource: { type: 'repository', name },
      claims: c,
    });
  const refused = await ask(claims, `${images}/app`);
  t.is(refused.status, 200, JSON.stringify(refused.body));
  t.false(refused.body.allowed);
  t.like(refused.body.conditional?.[0]?.condition, {
    expression,
    result: false,
    values: { 'token.claims': { ref: 'refs/heads/dev' } },
  });
  // The same question for main: the push it admitted.
  const admitted = await ask({ ...claims, ref: MAIN }, `${images}/app`);
  t.true(admitted.body.allowed, JSON.stringify(admitted.body));
  t.like(admitted.body.grants?.[0]?.condition, { result: true });
  // Main, outside platform/images: the refused tools push, with the name it read.
  const outside = await ask({ ...claims, ref: MAIN }, `${tools_}/app`);
  t.false(outside.body.allowed);
  t.like(outside.body.conditional?.[0]?.condition, {
    result: false,
    values: { 'resource.name': `${tools_}/app` },
  });
});
