import test from 'ava';
import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import type { GrpcTestServer } from '../helpers/grpc-server.js';
import { basic } from '../helpers/registry-fixtures.js';
import { runArbor } from '../helpers/cli-run.js';
import {
  ACCESS,
  EXCHANGE,
  ID_TOKEN,
  ISSUER,
  SERVICE,
  exchange,
  fullToken,
  oauthClient,
  rawToken,
  refusal,
  startOAuthWorld,
  stopOAuthWorld,
  workloadToken,
} from '../helpers/oauth-world.js';

/** The OAuth 2.0 doors through openid-client: metadata, exchange, down-scoping, introspection, revocation (docs/oauth.md); the world is test/helpers/oauth-world.ts. */
let s: GrpcTestServer;
let org: string;
let folder: string;
let sibling: string;
let otherOrg: string;
let ci: string;
let stranger: string;

test.before(async () => {
  ({ s, org, folder, sibling, otherOrg, ci, stranger } = await startOAuthWorld());
});
test.after.always(stopOAuthWorld);

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
  const repos = await c.get(`/registry/v2beta1/repos?uidp.descendants_of=${org}`);
  t.is(repos.status, 200, JSON.stringify(repos.body));
  t.deepEqual(repos.body.repos, []);
  const asIdentity = await s
    .client(await fullToken())
    .get(`/registry/v2beta1/repos?uidp.descendants_of=${org}`);
  t.is(asIdentity.body.repos.length, 1, 'the identity itself lists the repo');
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
  // Without identity.list on itself, the token is told its identity is not there.
  t.is(check.status, 404, JSON.stringify(check.body));
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
