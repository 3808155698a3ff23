import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { decodeJwt } from 'jose';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { needTool } from '../helpers/need-tool.js';
import {
  oauth2ProxyMissing,
  startOAuth2Proxy,
  startUpstream,
  type OAuth2Proxy,
  type Upstream,
} from '../helpers/oauth2-proxy.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { freePort, startArborProcess, type ArborProcess } from '../helpers/process.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { makeClient, type Client } from '../helpers/server.js';

/**
 * A gateway that trusts Arbor's API tokens (docs/oauth-clients.md): a real `arbor serve`,
 * a real OAuth2 Proxy in front of a small upstream, told to accept bearer JWTs of Arbor's
 * issuer for Arbor's API audience and nothing else. It finds the keys itself, through the
 * issuer's discovery document and JWKS. What the upstream receives is the proof: a request
 * the gateway refused never reaches it.
 */
const maybe = needTool(test.serial, 'OAuth2 Proxy', oauth2ProxyMissing());
const TOKEN = 'e2e-oauth2-proxy-admin-token-0123456789';
const SERVICE = 'registry.gateway.test';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';

let arbor: ArborProcess;
let admin: Client;
let issuer: TestIssuer;
let upstream: Upstream;
let proxy: OAuth2Proxy;
let dataDir: string;
/** Arbor's issuer and API audience: the address the gateway reaches it at. */
let api: string;
let org: string;
let agent: string;

test.before(async () => {
  if (oauth2ProxyMissing() !== undefined) return;
  // ES256 like Arbor's keys: a foreign token is refused for its issuer, not its algorithm.
  issuer = await TestIssuer.start('ES256');
  dataDir = mkdtempSync(join(tmpdir(), 'arbor-e2e-oauth2-proxy-'));
  const port = await freePort();
  // The issuer (and the API audience) is the address the gateway reaches Arbor at, so its
  // discovery document names exactly the issuer the gateway was told to trust.
  api = `http://127.0.0.1:${port}`;
  arbor = await startArborProcess({
    PORT: String(port),
    DATA_DIR: dataDir,
    ARBOR_ADMIN_TOKEN: TOKEN,
    ARBOR_ISSUER_URL: api,
    ARBOR_REGISTRY_SERVICE: SERVICE,
    ARBOR_ALLOW_INSECURE_ISSUERS: 'true',
  });
  admin = makeClient(arbor.url, TOKEN);
  org = await createGroup(admin, 'gateway-org');
  agent = await createIdentity(admin, org, 'agent', { issuer: issuer.url, subject: 'sub-agent' });
  await createBinding(admin, org, agent, await builtinRoleUid(admin, 'viewer'));
  upstream = await startUpstream();
  proxy = await startOAuth2Proxy({ issuer: api, audience: api, upstream: upstream.url });
});

test.after.always(async () => {
  if (process.env.ARBOR_TEST_VERBOSE && proxy) console.log(proxy.logs());
  await proxy?.stop();
  await upstream?.close();
  await arbor?.stop();
  await issuer?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** The workload's own OIDC token, for Arbor's API (what the STS and token endpoint take). */
function workloadToken(exp?: number): Promise<string> {
  return issuer.mint({ sub: 'sub-agent', aud: api }, exp === undefined ? {} : { exp });
}

/** An Arbor API token from the token endpoint (RFC 8693), as a pipeline would get one. */
async function apiToken(extra: Record<string, string> = {}, exp?: number): Promise<string> {
  const res = await fetch(`${arbor.url}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: EXCHANGE,
      subject_token: await workloadToken(exp),
      subject_token_type: ID_TOKEN,
      identity: agent,
      ...extra,
    }).toString(),
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) throw new Error(`token endpoint: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token as string;
}

/** A GET through the gateway; the status and whether the upstream saw it. */
async function through(token: string | undefined, path: string) {
  const before = upstream.seen.length;
  const res = await fetch(`${proxy.url}${path}`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    redirect: 'manual',
  });
  const body = await res.text();
  const seen = upstream.seen.slice(before).find((r) => r.path === path);
  return { status: res.status, body, seen };
}

maybe('a token for the gateway audience reaches the upstream, naming its identity', async (t) => {
  const token = await apiToken();
  t.is(decodeJwt(token).aud, api);
  const r = await through(token, '/tools/list?n=1');
  t.is(r.status, 200, proxy.logs());
  t.is(r.body, 'upstream');
  t.truthy(r.seen, 'the upstream saw the request');
  // Who the token names, as the gateway tells the upstream.
  t.is(r.seen?.headers['x-forwarded-user'], agent);
  // Arbor's tokens carry no email: OAuth2 Proxy says the uid there too.
  t.is(r.seen?.headers['x-forwarded-email'], agent);
  // A down-scoped token (token exchange with scope and resource) is as good at the gateway:
  // what it may do at Arbor is narrower, who it is is the same.
  const narrow = await apiToken({
    subject_token: token,
    subject_token_type: ACCESS,
    scope: 'groups.list',
  });
  t.is(decodeJwt(narrow).scope, 'groups.list');
  const n = await through(narrow, '/tools/narrow');
  t.is(n.status, 200);
  t.is(n.seen?.headers['x-forwarded-user'], agent);
});

maybe('no token, a token for another audience, and another issuer are refused', async (t) => {
  const none = await through(undefined, '/tools/none');
  t.is(none.status, 403);
  t.is(none.seen, undefined, 'the upstream never saw the anonymous request');

  // Signed by Arbor with the same keys, for the registry's audience (a registry login).
  const q = new URLSearchParams({ aud: SERVICE, identity: agent });
  const login = await fetch(`${arbor.url}/sts/exchange?${q.toString()}`, {
    headers: { authorization: `Bearer ${await workloadToken()}` },
  });
  t.is(login.status, 200);
  const registryToken = ((await login.json()) as { token: string }).token;
  t.is(decodeJwt(registryToken).aud, SERVICE);
  t.is(decodeJwt(registryToken).iss, api);
  const other = await through(registryToken, '/tools/other-audience');
  t.is(other.status, 403);
  t.is(other.seen, undefined, 'the upstream never saw the other audience');

  // For Arbor's audience, but from the workload's issuer: not Arbor's signature.
  const foreign = await through(await workloadToken(), '/tools/foreign');
  t.is(foreign.status, 403);
  t.is(foreign.seen, undefined, 'the upstream never saw the foreign token');

  // An Arbor token with one byte of its signature changed.
  const good = await apiToken();
  const [h, p, sig] = good.split('.');
  const flipped = `${h}.${p}.${sig!.slice(0, 10)}${sig![10] === 'A' ? 'B' : 'A'}${sig!.slice(11)}`;
  const forged = await through(flipped, '/tools/forged');
  t.is(forged.status, 403);
  t.is(forged.seen, undefined, 'the upstream never saw the forged token');
});

maybe('an expired token is refused, the same token that passed while it lived', async (t) => {
  // An API token never outlives its subject token: a workload token with seconds to live
  // makes an API token with seconds to live.
  const now = Math.floor(Date.now() / 1000);
  const token = await apiToken({}, now + 6);
  const exp = decodeJwt(token).exp!;
  t.true(exp <= now + 6, `exp ${exp}`);
  const live = await through(token, '/tools/live');
  t.is(live.status, 200, 'the token passes while it lives');
  t.truthy(live.seen);
  await new Promise((r) => setTimeout(r, Math.max(0, (exp + 1) * 1000 - Date.now())));
  const dead = await through(token, '/tools/dead');
  t.is(dead.status, 403);
  t.is(dead.seen, undefined, 'the upstream never saw the expired token');
});

maybe(
  'a revoked token still passes a JWT-checking gateway (it cannot see revocation); Arbor refuses it',
  async (t) => {
    // What docs/oauth-clients.md says a gateway must live with: OAuth2 Proxy checks the
    // signature, issuer, audience and expiry, and never asks Arbor. Revocation reaches it
    // only through the token's expiry (at most an hour), or introspection at the resource.
    const token = await apiToken();
    const me = makeClient(arbor.url, token);
    t.is((await me.get(`/iam/v2beta1/groups/${org}`)).status, 200);
    const revoke = await fetch(`${arbor.url}/oauth2/revoke`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token }).toString(),
    });
    t.is(revoke.status, 200);
    t.is((await me.get(`/iam/v2beta1/groups/${org}`)).status, 401, 'Arbor refuses it at once');
    const introspected = await fetch(`${arbor.url}/oauth2/introspect`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token }).toString(),
    });
    t.deepEqual(await introspected.json(), { active: false }, 'introspection says so');
    const r = await through(token, '/tools/revoked');
    t.is(r.status, 200, 'the gateway, checking the JWT alone, lets it through');
    t.truthy(r.seen);
  },
);
