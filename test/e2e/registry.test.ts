import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
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
 * A real CNCF Distribution registry trusting Arbor (spec §5.5): token auth against
 * Arbor's token server with Arbor's JWKS, notifications into Arbor. crane pushes and
 * pulls as Arbor identities; what each may do comes from their role bindings only.
 */
const tools = registryTools();
const maybe = needTool(
  test.serial,
  'registry and crane',
  tools.available ? undefined : tools.reason,
);

const SERVICE = 'registry.e2e.local';
const NOTIFY = 'e2e-notify-secret-0123456789';

let s: TestServer;
let issuer: TestIssuer;
let reg: RunningRegistry;
let dir: string;
let org: string;
let otherOrg: string;
const ids: Record<string, string> = {};
const tokens: Record<string, string> = {};
let layer: string;

async function apiToken(uid: string, sub: string): Promise<string> {
  const upstream = await issuer.mint({ sub, aud: s.arbor.config.issuerUrl });
  const q = new URLSearchParams({ aud: s.arbor.config.issuerUrl, identity: uid });
  const res = await s.client(upstream).get(`/sts/exchange?${q.toString()}`);
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  return res.body.token as string;
}

/** crane as `who`, logged in with its Arbor API token the way a person would. */
async function as(who: string, args: string[]) {
  const cfg = join(dir, 'docker', who);
  if (tokens[who] !== undefined) {
    mkdirSync(cfg, { recursive: true });
    const login = await crane(tools.available ? tools.crane : '', cfg, [
      'auth',
      'login',
      reg.host,
      '-u',
      '_token',
      '-p',
      tokens[who]!,
    ]);
    if (login.code !== 0) throw new Error(`crane auth login: ${login.stderr}`);
  }
  return crane(tools.available ? tools.crane : '', cfg, args);
}

test.before(async () => {
  if (!tools.available) return;
  dir = mkdtempSync(join(tmpdir(), 'arbor-registry-e2e-'));
  s = await startServer({
    ARBOR_ALLOW_INSECURE_ISSUERS: 'true',
    ARBOR_REGISTRY_SERVICE: SERVICE,
    ARBOR_REGISTRY_NOTIFY_TOKEN: NOTIFY,
  });
  issuer = await TestIssuer.start();
  org = await createGroup(s.admin, 'registry-e2e');
  otherOrg = await createGroup(s.admin, 'registry-e2e-other');
  const bindings: Array<[string, string, string]> = [
    ['pusher', org, 'registry.push'],
    ['puller', org, 'registry.pull'],
    ['viewer', org, 'viewer'],
    ['stranger', otherOrg, 'registry.pull'],
  ];
  for (const [name, group, role] of bindings) {
    ids[name] = await createIdentity(s.admin, group, name, {
      issuer: issuer.url,
      subject: `sub-${name}`,
    });
    await createBinding(s.admin, group, ids[name], await builtinRoleUid(s.admin, role));
    tokens[name] = await apiToken(ids[name], `sub-${name}`);
  }
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

maybe(
  'registry: an identity with registry.push pushes, and the tag appears in Arbor',
  async (t) => {
    const pushed = await as('pusher', ['append', '-f', layer, '-t', ref(`${org}/app`, 'v1')]);
    t.is(pushed.code, 0, pushed.stderr);
    const digest = pushed.stdout.trim().split('@')[1];
    t.regex(digest ?? '', /^sha256:[0-9a-f]{64}$/);

    // Notifications are asynchronous: wait (generously, the machine may be loaded).
    let tag: { name: string; digest: string; updateTime: string } | undefined;
    const deadline = Date.now() + 60_000;
    while (!tag && Date.now() < deadline) {
      const repos = await s.admin.get(`/registry/v2beta1/repos?uidp.children_of=${org}&name=app`);
      const repo = repos.body.repos?.[0];
      if (repo) {
        const tags = await s.admin.get(`/registry/v2beta1/tags?uidp.children_of=${repo.uid}`);
        tag = tags.body.tags?.find((x: { name: string }) => x.name === 'v1');
      }
      if (!tag) await new Promise((r) => setTimeout(r, 250));
    }
    t.truthy(tag, `no tag v1 in Arbor; registry log:\n${reg.log().slice(-4000)}`);
    t.is(tag?.digest, digest);
    t.truthy(tag?.updateTime);

    // The pusher's own token lists it too (registry.push includes tag.list).
    const mine = await s.client(tokens.pusher).get('/registry/v2beta1/tags?name=v1');
    t.true(mine.body.tags.some((x: { digest: string }) => x.digest === digest));
  },
);

maybe('registry: registry.pull and viewer pull; a viewer may not push', async (t) => {
  for (const who of ['puller', 'viewer']) {
    const out = join(dir, `${who}.tar`);
    const pulled = await as(who, ['pull', ref(`${org}/app`, 'v1'), out]);
    t.is(pulled.code, 0, `${who}: ${pulled.stderr}`);
  }
  const refused = await as('viewer', ['append', '-f', layer, '-t', ref(`${org}/app`, 'v2')]);
  t.not(refused.code, 0);
  // How crane words the refusal depends on its order of requests: the 401 itself, or, when
  // the blobs exist already and the manifest PUT is the first write, Go's complaint that it
  // cannot send the PUT's body a second time after the 401 made it fetch a token (which
  // still holds pull only). Either way the registry refused; what decides is below.
  t.regex(
    refused.stderr,
    /UNAUTHORIZED|DENIED|401|403|ContentLength=\d+ with Body length 0/,
    refused.stderr,
  );
  const refusedPuller = await as('puller', ['append', '-f', layer, '-t', ref(`${org}/app`, 'v2')]);
  t.not(refusedPuller.code, 0);
  // Nothing was written: the registry has no v2, as the pusher (who may read it) sees.
  const v2 = await as('pusher', ['digest', ref(`${org}/app`, 'v2')]);
  t.not(v2.code, 0);
  t.regex(v2.stderr, /MANIFEST_UNKNOWN|NOT_FOUND|404/, v2.stderr);
});

maybe(
  'registry: an identity of another org may not pull, and anonymous may not either',
  async (t) => {
    const stranger = await as('stranger', ['pull', ref(`${org}/app`, 'v1'), join(dir, 's.tar')]);
    t.not(stranger.code, 0);
    t.regex(stranger.stderr, /UNAUTHORIZED|DENIED|401|403/);
    const anon = await as('anonymous', ['digest', ref(`${org}/app`, 'v1')]);
    t.not(anon.code, 0);
  },
);

maybe(
  'registry: a workload token with the identity uid as username pulls (no imagePullSecret)',
  async (t) => {
    const upstream = await issuer.mint({ sub: 'sub-puller', aud: s.arbor.config.issuerUrl });
    const cfg = join(dir, 'docker', 'workload');
    const login = await crane(tools.available ? tools.crane : '', cfg, [
      'auth',
      'login',
      reg.host,
      '-u',
      ids.puller!,
      '-p',
      upstream,
    ]);
    t.is(login.code, 0, login.stderr);
    const digest = await crane(tools.available ? tools.crane : '', cfg, [
      'digest',
      ref(`${org}/app`, 'v1'),
    ]);
    t.is(digest.code, 0, digest.stderr);
    t.regex(digest.stdout, /^sha256:/);
  },
);
