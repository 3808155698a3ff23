import test from 'ava';
import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { basic, builtinRoleUid } from '../helpers/registry-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { unsignedToken } from '../helpers/sts.js';
import { runArbor } from '../helpers/cli-run.js';

/**
 * The OAuth 2.0 doors (docs/oauth.md) through a real OAuth client (openid-client): the
 * metadata, token exchange with down-scoping, introspection and revocation, and the
 * attacks on them. The issuer is a name (`http://arbor.test`) the client's fetch sends to
 * the server's real address, so discovery checks the issuer exactly as it would in use.
 */
const ISSUER = 'http://arbor.test';
const SERVICE = 'registry.oauth.test';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
const ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';

let s: GrpcTestServer;
let issuer: TestIssuer;
let org: string;
let folder: string;
let sibling: string;
let otherOrg: string;
let ci: string;
let stranger: string;

test.before(async () => {
  s = await startGrpcServer({
    ARBOR_ALLOW_INSECURE_ISSUERS: 'true',
    ARBOR_ISSUER_URL: ISSUER,
    ARBOR_REGISTRY_SERVICE: SERVICE,
  });
  issuer = await TestIssuer.start();
  org = await createGroup(s.admin, 'oauth-org');
  folder = await createGroup(s.admin, 'team', org);
  sibling = await createGroup(s.admin, 'other-team', org);
  otherOrg = await createGroup(s.admin, 'oauth-other');
  const claimMatch = (sub: string) => ({ issuer: issuer.url, subject: sub });
  ci = await createIdentity(s.admin, org, 'ci', claimMatch('sub-ci'));
  stranger = await createIdentity(s.admin, otherOrg, 'stranger', claimMatch('sub-stranger'));
  await createBinding(s.admin, org, ci, await builtinRoleUid(s.admin, 'viewer'));
  await createBinding(s.admin, folder, ci, await builtinRoleUid(s.admin, 'registry.push'));
  await createBinding(s.admin, otherOrg, stranger, await builtinRoleUid(s.admin, 'viewer'));
  const made = await s.admin.post(`/registry/v2beta1/repos/${folder}`, { name: 'app' });
  if (made.status !== 200) throw new Error(JSON.stringify(made.body));
});
test.after.always(async () => {
  await issuer?.stop();
  await s?.close();
});

/** The client's fetch: the issuer's name is sent to the test server's address. */
const toServer: client.CustomFetch = (url, options) =>
  fetch(url.replace(ISSUER, s.url), options as RequestInit);

/** A discovered configuration whose calls authenticate with `bearer` (or as a public client). */
async function oauthClient(bearer?: string): Promise<client.Configuration> {
  const auth: client.ClientAuth = bearer
    ? (_as, _c, _body, headers) => headers.set('authorization', `Bearer ${bearer}`)
    : client.None();
  const config = await client.discovery(new URL(ISSUER), 'arbor-tests', undefined, auth, {
    algorithm: 'oauth2',
    execute: [client.allowInsecureRequests],
    [client.customFetch]: toServer,
  });
  config[client.customFetch] = toServer;
  return config;
}

async function workloadToken(sub = 'sub-ci', exp?: number): Promise<string> {
  return issuer.mint({ sub, aud: ISSUER }, exp === undefined ? {} : { exp });
}

async function exchange(params: Record<string, string | string[]>): Promise<string> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    for (const one of Array.isArray(v) ? v : [v]) form.append(k, one);
  const res = await client.genericGrantRequest(await oauthClient(), EXCHANGE, form);
  return res.access_token;
}

/** A raw POST of `body` to the token endpoint: for what no client library would send. */
async function rawToken(
  body: string,
  type = 'application/x-www-form-urlencoded',
  path = '/oauth2/token',
) {
  const res = await fetch(`${s.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': type },
    body,
  });
  return {
    status: res.status,
    headers: res.headers,
    body: (await res.json()) as Record<string, unknown>,
  };
}

async function refusal(params: Record<string, string | string[]>): Promise<unknown> {
  const err = await exchange(params).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof client.ResponseBodyError)) throw new Error(`not refused: ${String(err)}`);
  return { error: err.error, status: err.status };
}

async function fullToken(): Promise<string> {
  return exchange({
    subject_token: await workloadToken(),
    subject_token_type: ID_TOKEN,
    identity: ci,
  });
}

test('metadata: the authorization server and the API describe themselves (RFC 8414, RFC 9728)', async (t) => {
  const config = await oauthClient();
  const as = config.serverMetadata();
  t.is(as.issuer, ISSUER);
  t.is(as.token_endpoint, `${ISSUER}/oauth2/token`);
  t.is(as.introspection_endpoint, `${ISSUER}/oauth2/introspect`);
  t.is(as.revocation_endpoint, `${ISSUER}/oauth2/revoke`);
  t.is(as.jwks_uri, `${ISSUER}/.well-known/jwks.json`);
  t.deepEqual(as.grant_types_supported, [EXCHANGE]);
  t.true((as.scopes_supported ?? []).includes('repo.list'));
  const pr = await s.client().get('/.well-known/oauth-protected-resource');
  t.is(pr.status, 200);
  t.is(pr.body.resource, ISSUER);
  t.deepEqual(pr.body.authorization_servers, [ISSUER]);
  t.deepEqual(pr.body.bearer_methods_supported, ['header']);
});

test('exchange: a workload token becomes an API token, never cached, with a jti and its lifetime bound', async (t) => {
  const exp = Math.floor(Date.now() / 1000) + 600;
  const upstream = await workloadToken('sub-ci', exp);
  const res = await client.genericGrantRequest(await oauthClient(), EXCHANGE, {
    subject_token: upstream,
    subject_token_type: ID_TOKEN,
    identity: ci,
  });
  t.is(res.token_type, 'bearer');
  t.is(res.issued_token_type, ACCESS);
  const claims = decodeJwt(res.access_token);
  t.is(claims.sub, ci);
  t.is(typeof claims.jti, 'string');
  t.true(claims.exp! <= exp, 'never outlives the subject token');
  t.true((res.expires_in ?? 0) <= 600);
  const raw = await rawToken(
    new URLSearchParams({
      grant_type: EXCHANGE,
      subject_token: upstream,
      subject_token_type: ID_TOKEN,
      identity: ci,
    }).toString(),
  );
  t.is(raw.status, 200);
  t.is(raw.headers.get('cache-control'), 'no-store');
  t.is((await s.client(res.access_token).get(`/iam/v2beta1/groups/${org}`)).status, 200);
});

test('down-scoping: the token holds only the scope asked, only in the groups asked, on REST, gRPC and the registry', async (t) => {
  const narrow = await exchange({
    subject_token: await fullToken(),
    subject_token_type: ACCESS,
    scope: 'groups.list repo.blobs.get',
    resource: folder,
  });
  const c = s.client(narrow);
  t.is((await c.get(`/iam/v2beta1/groups/${folder}`)).status, 200);
  // The identity may list its organization; the token may not, outside its group.
  t.is((await c.get(`/iam/v2beta1/groups/${org}`)).status, 404);
  t.is((await c.get(`/iam/v2beta1/groups/${sibling}`)).status, 404);
  // repo.list is the identity's (viewer), not the token's.
  t.not((await c.get(`/registry/v2beta1/repos?uidp.descendants_of=${org}`)).body?.items?.length, 1);
  const g = s.grpc(narrow);
  t.is((await g.call(GroupsService, 'GetGroup', { uid: folder })).code, 0);
  t.is((await g.call(GroupsService, 'GetGroup', { uid: org })).code, 5);
  // The registry: pull (repo.blobs.get) is in scope; push (the identity holds it) is not.
  const q = new URLSearchParams({ service: SERVICE, scope: `repository:${folder}/app:pull,push` });
  const reg = await fetch(`${s.url}/auth/registry/token?${q.toString()}`, {
    headers: { authorization: basic('_token', narrow) },
  });
  const access = decodeJwt(((await reg.json()) as { token: string }).token).access;
  t.deepEqual(access, [{ type: 'repository', name: `${folder}/app`, actions: ['pull'] }]);
  // A self check answers from the token's grants too: it is not "itself" for the check.
  const check = await c.post('/iam/v2beta1/access:check', {
    identityUid: ci,
    capability: 'manifest.create',
    groupUid: folder,
  });
  t.not(check.body?.allowed, true, JSON.stringify(check.body));
});

test('widening: more scope, a wider group or another organization than the subject holds is refused', async (t) => {
  const full = await fullToken();
  const narrow = await exchange({
    subject_token: full,
    subject_token_type: ACCESS,
    scope: 'groups.list',
    resource: folder,
  });
  const base = { subject_token: narrow, subject_token_type: ACCESS };
  t.deepEqual(await refusal({ ...base, scope: 'groups.list manifest.create' }), {
    error: 'invalid_scope',
    status: 400,
  });
  t.deepEqual(await refusal({ ...base, resource: org }), { error: 'invalid_target', status: 400 });
  t.deepEqual(await refusal({ ...base, resource: [folder, sibling] }), {
    error: 'invalid_target',
    status: 400,
  });
  const fullBase = { subject_token: full, subject_token_type: ACCESS };
  t.deepEqual(await refusal({ ...fullBase, resource: otherOrg }), {
    error: 'invalid_target',
    status: 400,
  });
  t.deepEqual(await refusal({ ...fullBase, scope: 'groups.delete' }), {
    error: 'invalid_scope',
    status: 400,
  });
  t.deepEqual(await refusal({ ...fullBase, scope: 'manifest.create', resource: sibling }), {
    error: 'invalid_scope',
    status: 400,
  });
  t.deepEqual(await refusal({ ...fullBase, scope: 'no.such.capability' }), {
    error: 'invalid_scope',
    status: 400,
  });
  // Without scope or resource, an exchange keeps the subject's narrowing, never drops it.
  const again = await exchange(base);
  t.is(decodeJwt(again).scope, 'groups.list');
  t.deepEqual(decodeJwt(again).arbor_groups, [folder]);
  t.is((await s.client(again).get(`/iam/v2beta1/groups/${org}`)).status, 404);
});

test('subject tokens: forged, expired, foreign or mistyped ones are invalid_grant', async (t) => {
  const id = { subject_token_type: ID_TOKEN, identity: ci };
  t.deepEqual(
    await refusal({
      ...id,
      subject_token: unsignedToken({ iss: issuer.url, sub: 'sub-ci', aud: ISSUER }),
    }),
    { error: 'invalid_grant', status: 400 },
  );
  const expired = await issuer.mint(
    { sub: 'sub-ci', aud: ISSUER },
    { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 },
  );
  t.deepEqual(await refusal({ ...id, subject_token: expired }), {
    error: 'invalid_grant',
    status: 400,
  });
  t.deepEqual(await refusal({ ...id, subject_token: await workloadToken('sub-stranger') }), {
    error: 'invalid_grant',
    status: 400,
  });
  const full = await fullToken();
  // An Arbor token presented as an OIDC token is not one; a tampered API token is nothing.
  t.deepEqual(await refusal({ ...id, subject_token: full }), {
    error: 'invalid_grant',
    status: 400,
  });
  const [h, p] = full.split('.');
  const tampered = `${h}.${p}.${'A'.repeat(86)}`;
  t.deepEqual(await refusal({ subject_token: tampered, subject_token_type: ACCESS }), {
    error: 'invalid_grant',
    status: 400,
  });
  // The static admin token is no API token to narrow.
  t.deepEqual(
    await refusal({
      subject_token: 'test-admin-token-0123456789abcdef',
      subject_token_type: ACCESS,
    }),
    { error: 'invalid_grant', status: 400 },
  );
  t.deepEqual(
    await refusal({ subject_token: full, subject_token_type: ACCESS, identity: stranger }),
    { error: 'invalid_grant', status: 400 },
  );
  t.deepEqual(
    await refusal({ subject_token: await workloadToken(), subject_token_type: ID_TOKEN }),
    { error: 'invalid_request', status: 400 },
  );
});

test('the form: bounded, form-encoded only, no repeats, no actor, every refusal typed', async (t) => {
  const ok = { grant_type: EXCHANGE, subject_token: 'x', subject_token_type: ACCESS };
  const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
  const cases: Array<[string, Awaited<ReturnType<typeof rawToken>>, string, number]> = [
    ['json', await rawToken(JSON.stringify(ok), 'application/json'), 'invalid_request', 400],
    ['no grant', await rawToken(form({ subject_token: 'x' })), 'invalid_request', 400],
    [
      'other grant',
      await rawToken(form({ ...ok, grant_type: 'password' })),
      'unsupported_grant_type',
      400,
    ],
    [
      'repeated grant',
      await rawToken(`${form(ok)}&grant_type=${encodeURIComponent(EXCHANGE)}`),
      'invalid_request',
      400,
    ],
    [
      'actor',
      await rawToken(form({ ...ok, actor_token: 'y', actor_token_type: ACCESS })),
      'invalid_request',
      400,
    ],
    ['bad escape', await rawToken(`${form(ok)}&scope=%zz`), 'invalid_request', 400],
    ['bad utf-8', await rawToken(`${form(ok)}&scope=%ff`), 'invalid_request', 400],
    ['raw control', await rawToken(`${form(ok)}&scope=a\u0000b`), 'invalid_request', 400],
    ['unknown parameter', await rawToken(form({ ...ok, password: 'p' })), 'invalid_request', 400],
    [
      'huge token',
      await rawToken(form({ ...ok, subject_token: 'x'.repeat(9000) })),
      'invalid_request',
      400,
    ],
    [
      'huge body',
      await rawToken(form({ ...ok, scope: 'x'.repeat(20_000) })),
      'invalid_request',
      400,
    ],
    [
      'many scopes',
      await rawToken(
        form({ ...ok, scope: Array.from({ length: 65 }, (_, i) => `c${i}`).join(' ') }),
      ),
      'invalid_scope',
      400,
    ],
    [
      'many resources',
      await rawToken(`${form(ok)}${'&resource=a'.repeat(17)}`),
      'invalid_target',
      400,
    ],
    [
      'foreign audience',
      await rawToken(form({ ...ok, audience: 'https://elsewhere.example' })),
      'invalid_target',
      400,
    ],
    [
      'subject type',
      await rawToken(form({ ...ok, subject_token_type: 'urn:x' })),
      'invalid_request',
      400,
    ],
  ];
  for (const [label, res, error, status] of cases) {
    t.is(res.status, status, label);
    t.is(res.body.error, error, `${label}: ${JSON.stringify(res.body)}`);
    t.is(typeof res.body.error_description, 'string', label);
    t.is(res.headers.get('cache-control'), 'no-store', label);
  }
  const inQuery = await fetch(`${s.url}/oauth2/token?grant_type=${encodeURIComponent(EXCHANGE)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form(ok),
  });
  t.is(inQuery.status, 400);
});

test('introspection: the holder and those who may list the identity learn of a token, nobody else', async (t) => {
  const narrow = await exchange({
    subject_token: await fullToken(),
    subject_token_type: ACCESS,
    scope: 'groups.list',
    resource: folder,
  });
  const own = await client.tokenIntrospection(await oauthClient(narrow), narrow);
  t.true(own.active);
  t.is(own.sub, ci);
  t.is(own.scope, 'groups.list');
  t.is(typeof own.jti, 'string');
  t.deepEqual(own.arbor_groups, [folder]);
  const admin = await client.tokenIntrospection(
    await oauthClient('test-admin-token-0123456789abcdef'),
    narrow,
  );
  t.true(admin.active);
  const other = await exchange({
    subject_token: await workloadToken('sub-stranger'),
    subject_token_type: ID_TOKEN,
    identity: stranger,
  });
  t.deepEqual(await client.tokenIntrospection(await oauthClient(other), narrow), { active: false });
  t.deepEqual(await client.tokenIntrospection(await oauthClient(narrow), 'not-a-token'), {
    active: false,
  });
  const anonymous = await rawToken(
    new URLSearchParams({ token: narrow }).toString(),
    undefined,
    '/oauth2/introspect',
  );
  t.is(anonymous.status, 401);
  t.is(anonymous.body.error, 'invalid_client');
});

test('revocation: a revoked token and every token exchanged from it are refused on REST and gRPC', async (t) => {
  const full = await fullToken();
  const child = await exchange({
    subject_token: full,
    subject_token_type: ACCESS,
    scope: 'groups.list',
  });
  const other = await exchange({
    subject_token: await workloadToken('sub-stranger'),
    subject_token_type: ID_TOKEN,
    identity: stranger,
  });
  // Not the stranger's to revoke.
  const denied = await client.tokenRevocation(await oauthClient(other), full).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.true(denied instanceof client.ResponseBodyError && denied.error === 'unauthorized_client');
  t.is((await s.client(full).get(`/iam/v2beta1/groups/${org}`)).status, 200);
  await client.tokenRevocation(await oauthClient(full), full);
  for (const tok of [full, child]) {
    t.is((await s.client(tok).get(`/iam/v2beta1/groups/${org}`)).status, 401);
    t.is((await s.grpc(tok).call(GroupsService, 'GetGroup', { uid: org })).code, 16);
    t.deepEqual(await client.tokenIntrospection(await oauthClient(other), tok), { active: false });
  }
  t.deepEqual(await refusal({ subject_token: child, subject_token_type: ACCESS }), {
    error: 'invalid_grant',
    status: 400,
  });
  // Unknown tokens are answered as revoked (RFC 7009 §2.2), by an authenticated caller.
  await t.notThrowsAsync(client.tokenRevocation(await oauthClient(other), 'never-issued'));
});

test('arbor auth revoke: revokes the token the CLI uses, which the API then refuses', async (t) => {
  const token = await fullToken();
  const env = { ARBOR_API_URL: s.url, ARBOR_TOKEN: token, HOME: '/nonexistent' };
  const run = await runArbor(['auth', 'revoke'], env);
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /revoked the ARBOR_TOKEN token/);
  t.is((await s.client(token).get(`/iam/v2beta1/groups/${org}`)).status, 401);
  // Revoking again with the revoked token: it no longer authenticates anyone.
  const again = await runArbor(['auth', 'revoke'], env);
  t.is(again.code, 6, again.stderr);
});
