import { randomUUID } from 'node:crypto';
import test from 'ava';
import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import { TokenService } from '../../src/gen/arbor/oauth/v2beta1/tokens_pb.js';
import type { GrpcTestServer } from '../helpers/grpc-server.js';
import { runArbor } from '../helpers/cli-run.js';
import { ADMIN_TOKEN } from '../helpers/server.js';
import {
  ACCESS,
  ID_TOKEN,
  exchange,
  fullToken,
  oauthClient,
  startOAuthWorld,
  stopOAuthWorld,
  workloadToken,
} from '../helpers/oauth-world.js';

/**
 * Sessions (docs/oauth.md, "Sessions"): the record of issued API tokens, listed and revoked
 * one by one on REST (`/iam/v2beta1/tokens`), gRPC (TokenService) and the CLI (`arbor auth
 * sessions`); revocations in the audit trail; and the attacks on them (another identity's
 * tokens, a down-scoped token, huge pages).
 */
let s: GrpcTestServer;
let org: string;
let folder: string;
let ci: string;
let stranger: string;

test.before(async () => {
  ({ s, org, folder, ci, stranger } = await startOAuthWorld());
});
test.after.always(async () => {
  await stopOAuthWorld();
});

const jtiOf = (token: string) => decodeJwt(token).jti as string;

interface Listed {
  jti: string;
  identity: string;
  parentJti?: string;
  scope?: string[];
  groups?: string[];
}

async function list(token: string, query = '') {
  const res = await s.client(token).get(`/iam/v2beta1/tokens${query}`);
  return res as {
    status: number;
    body: { tokens: Listed[]; nextPageToken?: string; totalCount: string } & Record<
      string,
      unknown
    >;
  };
}

async function strangerToken(): Promise<string> {
  return exchange({
    subject_token: await workloadToken('sub-stranger'),
    subject_token_type: ID_TOKEN,
    identity: stranger,
  });
}

test('a session and the token exchanged from it are listed to their identity, with the parent named', async (t) => {
  const full = await fullToken();
  const narrow = await exchange({
    subject_token: full,
    subject_token_type: ACCESS,
    scope: 'groups.list',
    resource: folder,
  });
  const res = await list(full);
  t.is(res.status, 200, JSON.stringify(res.body));
  const mine = res.body.tokens.find((x) => x.jti === jtiOf(full));
  const child = res.body.tokens.find((x) => x.jti === jtiOf(narrow));
  t.truthy(mine);
  t.is(mine?.identity, ci);
  t.is(mine?.parentJti, undefined);
  t.is(child?.parentJti, jtiOf(full));
  t.deepEqual(child?.scope, ['groups.list']);
  t.deepEqual(child?.groups, [folder]);
  t.true(res.body.tokens.every((x) => x.identity === ci));
});

test('attack: another identity lists none of its tokens and cannot revoke one, answered as for an unknown jti', async (t) => {
  const full = await fullToken();
  const other = await strangerToken();
  const theirs = await list(other);
  t.is(theirs.status, 200);
  t.false(theirs.body.tokens.some((x) => x.identity === ci));
  // Asking for ci's tokens by filter changes nothing: visibility is decided first.
  const filtered = await list(other, `?identity=${encodeURIComponent(ci)}`);
  t.is(filtered.status, 200);
  t.is(filtered.body.tokens.length, 0);
  const known = await s.client(other).post('/iam/v2beta1/tokens:revoke', { jti: jtiOf(full) });
  const unknown = await s.client(other).post('/iam/v2beta1/tokens:revoke', { jti: randomUUID() });
  t.is(known.status, 404);
  t.is(unknown.status, 404);
  const shape = (b: any) => ({ code: b.code, types: b.details.map((d: any) => d['@type']) });
  t.deepEqual(shape(known.body), shape(unknown.body));
  // The token still works: nothing was revoked.
  t.is((await s.client(full).get(`/iam/v2beta1/groups/${org}`)).status, 200);
});

test('attack: a down-scoped token may neither list nor revoke sessions', async (t) => {
  const full = await fullToken();
  const narrow = await exchange({
    subject_token: full,
    subject_token_type: ACCESS,
    scope: 'groups.list',
  });
  t.is((await list(narrow)).status, 403);
  const r = await s.client(narrow).post('/iam/v2beta1/tokens:revoke', { jti: jtiOf(full) });
  t.is(r.status, 403);
  t.is((await s.client(full).get(`/iam/v2beta1/groups/${org}`)).status, 200);
});

test('attack: a huge page size is bounded, and pages follow each other', async (t) => {
  const full = await fullToken();
  await exchange({ subject_token: full, subject_token_type: ACCESS, scope: 'groups.list' });
  const huge = await list(full, '?page_size=100000000');
  t.is(huge.status, 200);
  t.true(huge.body.tokens.length <= 200);
  const first = await list(full, '?page_size=1');
  t.is(first.body.tokens.length, 1);
  t.truthy(first.body.nextPageToken);
  const second = await list(full, `?page_size=1&page_token=${first.body.nextPageToken}`);
  t.is(second.status, 200);
  t.is(second.body.tokens.length, 1);
  t.not(second.body.tokens[0]!.jti, first.body.tokens[0]!.jti);
  t.is((await list(full, '?page_size=-1')).status, 400);
  const oversized = await s
    .client(full)
    .post('/iam/v2beta1/tokens:revoke', { jti: 'x'.repeat(65) });
  t.is(oversized.status, 400);
});

test('revoking a session revokes the tokens exchanged from it, and is an audit record naming who and which', async (t) => {
  const full = await fullToken();
  const child = await exchange({
    subject_token: full,
    subject_token_type: ACCESS,
    scope: 'groups.list',
  });
  const grandchild = await exchange({ subject_token: child, subject_token_type: ACCESS });
  const other = await fullToken();
  const res = await s.client(other).post('/iam/v2beta1/tokens:revoke', { jti: jtiOf(full) });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is((res.body as Listed).jti, jtiOf(full));
  for (const tok of [full, child, grandchild])
    t.is((await s.client(tok).get(`/iam/v2beta1/groups/${org}`)).status, 401);
  t.deepEqual(await client.tokenIntrospection(await oauthClient(other), child), { active: false });
  // No longer listed, nor its descendants; the sibling session still is.
  const after = await list(other);
  const jtis = after.body.tokens.map((x) => x.jti);
  t.false(jtis.includes(jtiOf(full)));
  t.false(jtis.includes(jtiOf(child)));
  t.true(jtis.includes(jtiOf(other)));
  // Again: it is no longer a live token of the caller's.
  t.is(
    (await s.client(other).post('/iam/v2beta1/tokens:revoke', { jti: jtiOf(full) })).status,
    404,
  );
  const events = await s.admin.get(
    `/audit/v2beta1/events?resource_type=${encodeURIComponent('iam.arbor.dev/ApiToken')}&page_size=200`,
  );
  const e = (events.body as any).events.find((x: any) => x.before?.jti === jtiOf(full));
  t.truthy(e, JSON.stringify(events.body));
  t.is(e.actor, `identity:${ci}`);
  t.is(e.resourceUid, ci);
  t.is(e.eventType, 'dev.arbor.iam.api_token.deleted.v1');
  t.is(e.before.identity, ci);
});

test('a revocation at /oauth2/revoke is an audit record too', async (t) => {
  const full = await fullToken();
  await client.tokenRevocation(await oauthClient(ADMIN_TOKEN), full);
  const events = await s.admin.get(
    `/audit/v2beta1/events?resource_type=${encodeURIComponent('iam.arbor.dev/ApiToken')}&page_size=200`,
  );
  const e = (events.body as any).events.find((x: any) => x.before?.jti === jtiOf(full));
  t.truthy(e);
  t.is(e.actor, 'admin');
  t.is(e.resourceUid, ci);
});

test('the admin lists every identity’s tokens, and one identity’s with `identity`', async (t) => {
  const mine = await fullToken();
  const theirs = await strangerToken();
  const all = await list(ADMIN_TOKEN, '?page_size=200');
  t.is(all.status, 200);
  const jtis = all.body.tokens.map((x) => x.jti);
  t.true(jtis.includes(jtiOf(mine)));
  t.true(jtis.includes(jtiOf(theirs)));
  const one = await list(ADMIN_TOKEN, `?identity=${encodeURIComponent(stranger)}&page_size=200`);
  t.true(one.body.tokens.every((x) => x.identity === stranger));
  t.true(one.body.tokens.some((x) => x.jti === jtiOf(theirs)));
});

test('expired records are swept in bounded batches as new ones are written', async (t) => {
  const knex = s.arbor.db.knex;
  const jti = randomUUID();
  const past = Math.floor(Date.now() / 1000) - 7200;
  s.arbor.issuedTokens.recorder.issued({
    jti,
    subject: ci,
    parents: [],
    scope: undefined,
    groups: undefined,
    actor: undefined,
    iat: past,
    exp: past + 60,
  });
  await s.arbor.issuedTokens.flush();
  t.is((await knex('api_tokens_issued').where({ jti })).length, 0);
  await fullToken();
  await s.arbor.issuedTokens.flush();
  t.true((await knex('api_tokens_issued').where('identity_uid', ci)).length > 0);
});

test('gRPC TokenService: exchange, introspect, list, revoke by id, and typed OAuth errors', async (t) => {
  const full = await fullToken();
  const g = s.grpc(full);
  const ex = await s.grpc().call(TokenService, 'ExchangeToken', {
    subjectToken: full,
    subjectTokenType: ACCESS,
    scope: 'groups.list',
  });
  t.true(ex.ok, JSON.stringify(ex));
  if (!ex.ok) return;
  const narrow = ex.json.accessToken as string;
  t.is(ex.json.scope, 'groups.list');
  const intro = await g.call(TokenService, 'IntrospectToken', { token: narrow });
  t.true(intro.ok && intro.json.active === true && intro.json.sub === ci, JSON.stringify(intro));
  const listed = await g.call(TokenService, 'ListTokens', { pageSize: 200 });
  t.true(listed.ok);
  if (!listed.ok) return;
  const child = listed.json.tokens.find((x: any) => x.jti === jtiOf(narrow));
  t.is(child?.parentJti, jtiOf(full));
  // Errors: an OAuth refusal is a google.rpc status with its code in ErrorInfo.reason.
  const bad = await s.grpc().call(TokenService, 'ExchangeToken', {
    subjectToken: 'not-a-token',
    subjectTokenType: ACCESS,
  });
  t.false(bad.ok);
  if (bad.ok) return;
  t.is(bad.code, 16);
  t.is(bad.status.details[0].reason, 'invalid_grant');
  const scope = await s.grpc().call(TokenService, 'ExchangeToken', {
    subjectToken: full,
    subjectTokenType: ACCESS,
    scope: 'no.such.capability',
  });
  t.true(!scope.ok && scope.code === 3 && scope.status.details[0].reason === 'invalid_scope');
  const anonymous = await s.grpc().call(TokenService, 'ListTokens', {});
  t.is(anonymous.code, 16);
  // Another identity's token by id: NOT_FOUND, as an unknown one.
  const other = s.grpc(await strangerToken());
  const theirs = await other.call(TokenService, 'RevokeTokenById', { jti: jtiOf(full) });
  t.is(theirs.code, 5);
  const denied = await other.call(TokenService, 'RevokeToken', { token: full });
  t.true(
    !denied.ok && denied.code === 7 && denied.status.details[0].reason === 'unauthorized_client',
  );
  const revoked = await g.call(TokenService, 'RevokeTokenById', { jti: jtiOf(narrow) });
  t.true(revoked.ok, JSON.stringify(revoked));
  const gone = await g.call(TokenService, 'IntrospectToken', { token: narrow });
  t.true(gone.ok && gone.json.active !== true);
  const self = await g.call(TokenService, 'RevokeToken', { token: full });
  t.true(self.ok);
  t.is((await s.client(full).get(`/iam/v2beta1/groups/${org}`)).status, 401);
});

test('arbor auth sessions: the table of the caller’s tokens, and revoke by a short id', async (t) => {
  const full = await fullToken();
  const narrow = await exchange({
    subject_token: full,
    subject_token_type: ACCESS,
    scope: 'groups.list',
  });
  const env = { ARBOR_API_URL: s.url, ARBOR_TOKEN: full, HOME: '/nonexistent' };
  const run = await runArbor(['auth', 'sessions'], env);
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /JTI\s+IDENTITY/);
  t.true(run.stdout.includes(jtiOf(narrow).slice(0, 8)));
  t.regex(run.stdout, /oauth-org\/ci/);
  const r = await runArbor(['auth', 'sessions', 'revoke', jtiOf(narrow).slice(0, 8)], env);
  t.is(r.code, 0, r.stderr);
  t.is((await s.client(narrow).get(`/iam/v2beta1/groups/${org}`)).status, 401);
  const missing = await runArbor(['auth', 'sessions', 'revoke', randomUUID()], env);
  t.is(missing.code, 4, missing.stderr);
});
