import test from 'ava';
import {
  createLocalJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  jwtVerify,
  type JWTPayload,
} from 'jose';
import * as client from 'openid-client';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import type { GrpcTestServer } from '../helpers/grpc-server.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import type { TestIssuer } from '../helpers/oidc-issuer.js';
import {
  ACCESS,
  EXCHANGE,
  ID_TOKEN,
  ISSUER,
  SERVICE,
  exchange,
  oauthClient,
  refusal,
  startOAuthWorld,
  stopOAuthWorld,
  workloadToken,
} from '../helpers/oauth-world.js';
import { basic, builtinRoleUid } from '../helpers/registry-fixtures.js';

/**
 * Tokens for other resource servers (RFC 8707 resource indicators, RFC 9068 JWT access
 * tokens; docs/oauth-clients.md): an MCP server the operator configured gets tokens with
 * its `aud`, verifiable against Arbor's JWKS, which Arbor's own API refuses; introspection
 * and revocation know them; and the attacks (an unknown, a fragment, two places at once,
 * the token fed back to Arbor as a credential or a subject token).
 */
const MCP = 'https://mcp.example.com/mcp';
const TOOLS = 'https://tools.example.com';
let s: GrpcTestServer;
let issuer: TestIssuer;
let org: string;
let folder: string;
let ci: string;
let stranger: string;
let agent: string;
let jwks: ReturnType<typeof createLocalJWKSet>;

test.before(async () => {
  ({ s, issuer, org, folder, ci, stranger } = await startOAuthWorld({
    ARBOR_OAUTH_RESOURCE_SERVERS: `${MCP}, ${TOOLS}`,
  }));
  agent = await createIdentity(s.admin, org, 'agent', { issuer: issuer.url, subject: 'sub-agent' });
  await createBinding(s.admin, org, agent, await builtinRoleUid(s.admin, 'viewer'));
  // A resource server's view of Arbor: the JWKS its metadata names, fetched once.
  const meta = (await oauthClient()).serverMetadata();
  const keys = await fetch(meta.jwks_uri!.replace(ISSUER, s.url));
  jwks = createLocalJWKSet((await keys.json()) as Parameters<typeof createLocalJWKSet>[0]);
});
test.after.always(stopOAuthWorld);

/** An API token of `uid`, from its workload token `sub`. */
async function apiTokenOf(uid: string, sub: string): Promise<string> {
  return exchange({
    subject_token: await workloadToken(sub),
    subject_token_type: ID_TOKEN,
    identity: uid,
  });
}

/** What a resource server at `aud` checks (RFC 9068 §4), with jose against Arbor's JWKS. */
async function verifiedAt(token: string, aud: string): Promise<JWTPayload> {
  const { payload, protectedHeader } = await jwtVerify(token, jwks, {
    issuer: ISSUER,
    audience: aud,
    algorithms: ['ES256'],
    typ: 'at+jwt',
    requiredClaims: ['iss', 'exp', 'aud', 'sub', 'client_id', 'iat', 'jti'],
  });
  if (protectedHeader.typ !== 'at+jwt') throw new Error('not at+jwt');
  return payload;
}

async function introspect(bearer: string, token: string) {
  const res = await fetch(`${s.url}/oauth2/introspect`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bearer}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ token }).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function revoke(bearer: string, token: string): Promise<number> {
  const res = await fetch(`${s.url}/oauth2/revoke`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bearer}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ token }).toString(),
  });
  return res.status;
}

test('exchange: resource=<a configured server> gives an RFC 9068 token for it, verified with jose against the JWKS', async (t) => {
  const exp = Math.floor(Date.now() / 1000) + 600;
  const subject = await apiTokenOf(ci, 'sub-ci');
  const res = await client.genericGrantRequest(await oauthClient(), EXCHANGE, {
    subject_token: await workloadToken('sub-ci', exp),
    subject_token_type: ID_TOKEN,
    identity: ci,
    resource: MCP,
    scope: 'groups.list',
  });
  t.is(res.issued_token_type, ACCESS);
  t.is(res.token_type, 'bearer');
  t.is(decodeProtectedHeader(res.access_token).typ, 'at+jwt');
  const claims = await verifiedAt(res.access_token, MCP);
  t.is(claims.iss, ISSUER);
  t.is(claims.aud, MCP);
  t.is(claims.sub, ci);
  t.is(claims.client_id, ci, 'not delegated: the subject asked for it');
  t.is(claims.scope, 'groups.list');
  t.is(typeof claims.jti, 'string');
  t.is(claims.act, undefined, 'act only when delegated');
  t.true(claims.exp! <= exp, 'never outlives the subject token');
  t.true(claims.iat! <= claims.exp!);
  // Not for another server, nor for Arbor's API.
  await t.throwsAsync(verifiedAt(res.access_token, TOOLS));
  await t.throwsAsync(verifiedAt(res.access_token, ISSUER));
  // From an API token: its parent is that token (revoking it revokes this).
  const derived = await exchange({
    subject_token: subject,
    subject_token_type: ACCESS,
    resource: TOOLS,
  });
  const d = await verifiedAt(derived, TOOLS);
  t.deepEqual(d.arbor_parents, [decodeJwt(subject).jti]);
  t.true(d.exp! <= decodeJwt(subject).exp!);
});

test('exchange: audience=<a configured server> does the same; an origin with or without its slash, any host case', async (t) => {
  const subject = await apiTokenOf(ci, 'sub-ci');
  const base = { subject_token: subject, subject_token_type: ACCESS };
  t.is((await verifiedAt(await exchange({ ...base, audience: MCP }), MCP)).aud, MCP);
  for (const spelled of [TOOLS, `${TOOLS}/`, 'https://TOOLS.example.com:443'])
    t.is((await verifiedAt(await exchange({ ...base, resource: spelled }), TOOLS)).aud, TOOLS);
  // Both naming the same server is one place.
  t.is((await verifiedAt(await exchange({ ...base, resource: MCP, audience: MCP }), MCP)).aud, MCP);
  // Groups still narrow it: the claims say where, for the server to read.
  const narrow = await verifiedAt(
    await exchange({ ...base, resource: [MCP, folder], scope: 'groups.list' }),
    MCP,
  );
  t.deepEqual(narrow.arbor_groups, [folder]);
  // resource=<Arbor's API> is an ordinary API token.
  const api = await exchange({ ...base, resource: ISSUER });
  t.is(decodeJwt(api).aud, ISSUER);
  t.is((await s.client(api).get(`/iam/v2beta1/groups/${org}`)).status, 200);
});

test('attack: a token for a resource server is refused by Arbor: REST, gRPC, registry, and as a subject or actor token', async (t) => {
  const forMcp = await exchange({
    subject_token: await apiTokenOf(ci, 'sub-ci'),
    subject_token_type: ACCESS,
    resource: MCP,
  });
  const rest = await s.client(forMcp).get(`/iam/v2beta1/groups/${org}`);
  t.is(rest.status, 401);
  const rpc = await s.grpc(forMcp).call(GroupsService, 'GetGroup', { uid: org });
  t.is(rpc.code, 16, 'UNAUTHENTICATED');
  const reg = await fetch(`${s.url}/auth/registry/token?service=${SERVICE}`, {
    headers: { authorization: basic('_token', forMcp) },
  });
  t.is(reg.status, 401);
  t.deepEqual(await refusal({ subject_token: forMcp, subject_token_type: ACCESS }), {
    error: 'invalid_grant',
    status: 400,
  });
  t.deepEqual(
    await refusal({ subject_token: forMcp, subject_token_type: ACCESS, resource: MCP }),
    { error: 'invalid_grant', status: 400 },
    'not even exchanged for another token of its own server',
  );
  t.deepEqual(
    await refusal({
      subject_token: await workloadToken('sub-ci'),
      subject_token_type: ID_TOKEN,
      identity: ci,
      actor_token: forMcp,
      actor_token_type: ACCESS,
    }),
    { error: 'invalid_grant', status: 400 },
  );
  // Nor does it authenticate introspection of anything but itself.
  const other = await apiTokenOf(ci, 'sub-ci');
  t.is((await introspect(forMcp, other)).status, 401);
});

test('attack: an unknown server, a fragment, a query, two places, another scheme: invalid_target', async (t) => {
  const base = { subject_token: await apiTokenOf(ci, 'sub-ci'), subject_token_type: ACCESS };
  const bad: Record<string, string | string[]>[] = [
    { resource: 'https://evil.example.com/mcp' },
    { resource: `${MCP}#frag` },
    { resource: `${MCP}#` },
    { resource: `${MCP}?tenant=a` },
    { resource: `${MCP}/` },
    { resource: 'http://mcp.example.com/mcp' },
    { resource: 'urn:example:mcp' },
    { resource: 'https://user@mcp.example.com/mcp' },
    { resource: [MCP, TOOLS] },
    { resource: [MCP, ISSUER] },
    { resource: MCP, audience: TOOLS },
    { audience: 'https://evil.example.com' },
    { audience: `${MCP}#x` },
    { audience: [MCP, TOOLS] },
    { resource: `https://mcp.example.com/${'a'.repeat(600)}` },
  ];
  for (const extra of bad)
    t.deepEqual(
      await refusal({ ...base, ...extra }),
      { error: 'invalid_target', status: 400 },
      JSON.stringify(extra),
    );
  // A token for a server never widens what the subject holds.
  t.deepEqual(await refusal({ ...base, resource: MCP, scope: 'identity.delete' }), {
    error: 'invalid_scope',
    status: 400,
  });
  const narrow = await exchange({ ...base, resource: folder, scope: 'groups.list' });
  t.deepEqual(
    await refusal({ subject_token: narrow, subject_token_type: ACCESS, resource: [MCP, org] }),
    { error: 'invalid_target', status: 400 },
  );
});

test('introspection: the holder and who may list the identity learn aud and client_id; the token itself too; nobody else', async (t) => {
  const subject = await apiTokenOf(ci, 'sub-ci');
  const forMcp = await exchange({
    subject_token: subject,
    subject_token_type: ACCESS,
    resource: MCP,
    scope: 'groups.list',
  });
  const info = await client.tokenIntrospection(await oauthClient(subject), forMcp);
  t.true(info.active);
  t.is(info.aud, MCP);
  t.is(info.sub, ci);
  t.is(info.client_id, ci);
  t.is(info.scope, 'groups.list');
  t.is(info.jti, decodeJwt(forMcp).jti);
  const byAdmin = await introspect('test-admin-token-0123456789abcdef', forMcp);
  t.is(byAdmin.body.aud, MCP);
  // The token presented as its own credential (a resource server with nothing else).
  const own = await introspect(forMcp, forMcp);
  t.is(own.status, 200);
  t.true(own.body.active);
  t.is(own.body.aud, MCP);
  const outsider = await apiTokenOf(stranger, 'sub-stranger');
  t.deepEqual((await introspect(outsider, forMcp)).body, { active: false });
});

test('revocation: the token itself, or the token it came from; then inactive, also to itself', async (t) => {
  const subject = await apiTokenOf(ci, 'sub-ci');
  const one = await exchange({ subject_token: subject, subject_token_type: ACCESS, resource: MCP });
  const two = await exchange({ subject_token: subject, subject_token_type: ACCESS, resource: MCP });
  t.true((await introspect(subject, one)).body.active);
  // A stranger may not revoke it.
  t.is(await revoke(await apiTokenOf(stranger, 'sub-stranger'), one), 403);
  t.is(await revoke(subject, one), 200);
  t.deepEqual((await introspect(subject, one)).body, { active: false });
  t.is((await introspect(one, one)).status, 401, 'a revoked token authenticates nothing');
  t.true((await introspect(subject, two)).body.active);
  // Revoking the parent revokes what came from it.
  t.is(await revoke(subject, subject), 200);
  const admin = 'test-admin-token-0123456789abcdef';
  t.deepEqual((await introspect(admin, two)).body, { active: false });
});

test.serial(
  'delegation: actor_token gives a token for the server with act and client_id the actor',
  async (t) => {
    const set = await s.admin.post('/iam/v2beta1/identities:setDelegationPolicy', {
      identityUid: ci,
      actors: [agent],
      capabilities: ['groups.list'],
      maxLifetimeSeconds: 900,
    });
    t.is(set.status, 200, JSON.stringify(set.body));
    const token = await exchange({
      subject_token: await workloadToken('sub-ci'),
      subject_token_type: ID_TOKEN,
      identity: ci,
      actor_token: await apiTokenOf(agent, 'sub-agent'),
      actor_token_type: ACCESS,
      resource: MCP,
    });
    const claims = await verifiedAt(token, MCP);
    t.is(claims.sub, ci);
    t.deepEqual(claims.act, { iss: ISSUER, sub: agent });
    t.is(claims.client_id, agent);
    t.is(claims.scope, 'groups.list');
    t.true(claims.exp! - claims.iat! <= 900);
    const info = await introspect('test-admin-token-0123456789abcdef', token);
    t.deepEqual(info.body.act, { iss: ISSUER, sub: agent });
    // The policy withdrawn, the delegated token is no longer active.
    const removed = await s.admin.post('/iam/v2beta1/identities:setDelegationPolicy', {
      identityUid: ci,
      actors: [],
    });
    t.is(removed.status, 200, JSON.stringify(removed.body));
    t.deepEqual((await introspect(token, token)).status, 401);
  },
);
