import test from 'ava';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import type { GrpcTestServer } from '../helpers/grpc-server.js';
import { createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { TestIssuer, b64json } from '../helpers/oidc-issuer.js';
import {
  ACCESS,
  ID_TOKEN,
  ISSUER,
  SERVICE,
  exchange,
  rawToken,
  refusal,
  startOAuthWorld,
  stopOAuthWorld,
} from '../helpers/oauth-world.js';
import { basic, builtinRoleUid } from '../helpers/registry-fixtures.js';

/**
 * `token.claims` end to end (docs/api.md, "Conditional role bindings"): an API token issued
 * by exchanging a verified upstream OIDC token (the STS, the token endpoint) carries its
 * claims, bounded; a token derived from it keeps its subject's claims, never an actor's;
 * REST, gRPC and the registry token server decide conditional bindings by them. And the
 * attacks: no claim comes from anything but the verified upstream token.
 */
let s: GrpcTestServer;
let issuer: TestIssuer;
let org: string;
let folder: string;
let sibling: string;
/** Bound (conditionally) viewer at the org: only on main. */
let builder: string;
/** Bound (conditionally) registry.push at the org: main, and only below `folder`. */
let pusher: string;
/** Unconditionally viewer: the actor of delegations. */
let agent: string;

const MAIN = 'refs/heads/main';
const ON_MAIN = `token.claims.ref == "${MAIN}"`;

test.before(async () => {
  ({ s, issuer, org, folder, sibling } = await startOAuthWorld());
  const cm = (sub: string) => ({ issuer: issuer.url, subject: sub });
  builder = await createIdentity(s.admin, org, 'builder', cm('sub-builder'));
  pusher = await createIdentity(s.admin, org, 'pusher', cm('sub-pusher'));
  agent = await createIdentity(s.admin, org, 'agent', cm('sub-agent'));
  const viewer = await builtinRoleUid(s.admin, 'viewer');
  const bind = async (identityUid: string, roleUid: string, expression: string) => {
    const r = await s.admin.post(`/iam/v2beta1/roleBindings/${org}`, {
      identityUid,
      roleUid,
      condition: { expression },
    });
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  };
  await bind(builder, viewer, ON_MAIN);
  // The token endpoint down-scopes and delegates only to capabilities held unconditionally
  // somewhere (it decides with no request): groups.list beside the org's conditional grant.
  await createBinding(
    s.admin,
    sibling,
    builder,
    await createRole(s.admin, org, 'lister', ['groups.list']),
  );
  await bind(
    pusher,
    await builtinRoleUid(s.admin, 'registry.push'),
    `${ON_MAIN} && resource.type == "registry.arbor.dev/Repo" && resource.name.startsWith("${folder}/")`,
  );
  await createBinding(s.admin, org, agent, viewer);
  const set = await s.admin.post('/iam/v2beta1/identities:setDelegationPolicy', {
    identityUid: builder,
    actors: [agent],
    capabilities: ['groups.list'],
  });
  if (set.status !== 200) throw new Error(JSON.stringify(set.body));
});
test.after.always(stopOAuthWorld);

/** A workload token of the test issuer, GitHub- and Kubernetes-like. */
function upstream(sub: string, extra: Record<string, unknown> = {}): Promise<string> {
  return issuer.mint({
    sub,
    aud: ISSUER,
    jti: 'upstream-jti',
    nbf: Math.floor(Date.now() / 1000) - 5,
    ref: MAIN,
    repository: 'acme/app',
    run_attempt: 1,
    'kubernetes.io': { namespace: 'ci', serviceaccount: { name: 'builder', uid: 'u-1' } },
    groups: ['a', 'b'],
    ...extra,
  });
}

async function sts(uid: string, token: string, aud = ISSUER): Promise<string> {
  const q = new URLSearchParams({ aud, identity: uid });
  const r = await s.client(token).get(`/sts/exchange?${q.toString()}`);
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body.token as string;
}

const carried = (token: string) => decodeJwt(token).arbor_claims as Record<string, unknown>;
const getOrg = async (token: string) =>
  (await s.client(token).get(`/iam/v2beta1/groups/${org}`)).status;

test('sts: the API token carries the verified claims, bounded and flattened', async (t) => {
  const token = await sts(builder, await upstream('sub-builder'));
  t.deepEqual(carried(token), {
    iss: issuer.url,
    sub: 'sub-builder',
    ref: MAIN,
    repository: 'acme/app',
    run_attempt: 1,
    'kubernetes.io.namespace': 'ci',
    'kubernetes.io.serviceaccount.name': 'builder',
    'kubernetes.io.serviceaccount.uid': 'u-1',
  });
  // The token's own bookkeeping is the API token's, not the upstream's.
  t.not(decodeJwt(token).jti, 'upstream-jti');
  t.is(decodeJwt(token).sub, builder);
});

test('rest and grpc: token.claims decides a conditional binding', async (t) => {
  const main = await sts(builder, await upstream('sub-builder'));
  const dev = await sts(builder, await upstream('sub-builder', { ref: 'refs/heads/dev' }));
  t.is(await getOrg(main), 200);
  t.is(await getOrg(dev), 404);
  const gMain = s.grpc(main);
  const gDev = s.grpc(dev);
  t.true((await gMain.call(GroupsService, 'GetGroup', { uid: org })).ok);
  t.is((await gDev.call(GroupsService, 'GetGroup', { uid: org })).code, 5, 'NOT_FOUND');
  gMain.close();
  gDev.close();
  // A token Arbor signs with no upstream claims (a sign-in, say) meets a missing claim: denied.
  const bare = (await s.arbor.tokens.sign(builder, { iss: issuer.url, sub: 'sub-builder' })).token;
  t.is(await getOrg(bare), 404);
});

test('token endpoint: a workload subject carries its claims; down-scoping keeps them', async (t) => {
  const full = await exchange({
    subject_token: await upstream('sub-builder'),
    subject_token_type: ID_TOKEN,
    identity: builder,
  });
  t.is(carried(full).ref, MAIN);
  t.is(await getOrg(full), 200);
  const narrow = await exchange({
    subject_token: full,
    subject_token_type: ACCESS,
    scope: 'groups.list',
  });
  t.deepEqual(carried(narrow), carried(full));
  t.is(await getOrg(narrow), 200);
  const devFull = await exchange({
    subject_token: await upstream('sub-builder', { ref: 'refs/heads/dev' }),
    subject_token_type: ID_TOKEN,
    identity: builder,
  });
  const devNarrow = await exchange({
    subject_token: devFull,
    subject_token_type: ACCESS,
    scope: 'groups.list',
  });
  t.is(carried(devNarrow).ref, 'refs/heads/dev');
  t.is(await getOrg(devNarrow), 404);
});

test("delegation: the token keeps its subject's claims, never the actor's", async (t) => {
  const subjectDev = await sts(builder, await upstream('sub-builder', { ref: 'refs/heads/dev' }));
  const actorMain = await sts(agent, await upstream('sub-agent'));
  const delegated = await exchange({
    subject_token: subjectDev,
    subject_token_type: ACCESS,
    actor_token: actorMain,
    actor_token_type: ACCESS,
  });
  t.is(carried(delegated).sub, 'sub-builder');
  t.is(carried(delegated).ref, 'refs/heads/dev', "the actor's main does not leak in");
  t.is(await getOrg(delegated), 404);
  // An OIDC actor token: the same.
  const delegatedOidc = await exchange({
    subject_token: subjectDev,
    subject_token_type: ACCESS,
    actor_token: await upstream('sub-agent'),
    actor_token_type: ID_TOKEN,
    actor_identity: agent,
  });
  t.is(carried(delegatedOidc).ref, 'refs/heads/dev');
  t.is(await getOrg(delegatedOidc), 404);
  // The other way round: a subject on main delegated to an actor on dev grants.
  const subjectMain = await sts(builder, await upstream('sub-builder'));
  const actorDev = await sts(agent, await upstream('sub-agent', { ref: 'refs/heads/dev' }));
  const ok = await exchange({
    subject_token: subjectMain,
    subject_token_type: ACCESS,
    actor_token: actorDev,
    actor_token_type: ACCESS,
  });
  t.is(carried(ok).ref, MAIN);
  t.is(await getOrg(ok), 200);
});

test('attack: form fields and scope cannot add claims', async (t) => {
  const dev = await sts(builder, await upstream('sub-builder', { ref: 'refs/heads/dev' }));
  for (const field of ['arbor_claims', 'claims', 'ref']) {
    const body = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: dev,
      subject_token_type: ACCESS,
      [field]: field === 'ref' ? MAIN : JSON.stringify({ ref: MAIN }),
    });
    const r = await rawToken(body.toString());
    t.is(r.status, 400, field);
    t.is(r.body.error, 'invalid_request', field);
  }
  t.like(
    await refusal({
      subject_token: dev,
      subject_token_type: ACCESS,
      scope: `groups.list ref=${MAIN}`,
    }),
    { error: 'invalid_scope' },
  );
  // The STS takes no claims beside the token either: an extra query parameter is ignored.
  const q = new URLSearchParams({ aud: ISSUER, identity: builder, ref: MAIN });
  const r = await s
    .client(await upstream('sub-builder', { ref: 'refs/heads/dev' }))
    .get(`/sts/exchange?${q.toString()}`);
  if (r.status === 200) {
    t.is(carried(r.body.token as string).ref, 'refs/heads/dev');
    t.is(await getOrg(r.body.token as string), 404);
  } else t.is(r.status, 400);
});

test('attack: a forged or tampered API token carrying claims is refused', async (t) => {
  const dev = await sts(builder, await upstream('sub-builder', { ref: 'refs/heads/dev' }));
  const [h, p, sig] = dev.split('.');
  const payload = decodeJwt(dev);
  const tampered = `${h}.${b64json({ ...payload, arbor_claims: { ...carried(dev), ref: MAIN } })}.${sig}`;
  t.is(await getOrg(tampered), 401);
  t.is((await s.client(`${h}.${p}.${sig}`).get(`/iam/v2beta1/groups/${org}`)).status, 404);
  // Signed by a key Arbor does not hold, with Arbor's kid and claims that would grant.
  const stray = await TestIssuer.strayKey('ES256');
  const forged = await new SignJWT({ ...payload, arbor_claims: { ref: MAIN } })
    .setProtectedHeader({ ...decodeProtectedHeader(dev), alg: 'ES256' })
    .sign(stray.privateKey);
  t.is(await getOrg(forged), 401);
  // An Arbor token with a malformed claims object (not scalars) is refused whole.
  const malformed = (
    await s.arbor.tokens.signFor('registry-login', SERVICE, builder, { arbor_claims: [1] }, 60)
  ).token;
  const reg = await s
    .client()
    .raw(`/auth/registry/token?service=${SERVICE}&scope=repository:${folder}/app:pull`, {
      headers: { authorization: basic('_token', malformed) },
    });
  t.is(reg.status, 401);
});

test('attack: the upstream cannot smuggle claims past the bounds', async (t) => {
  // A claim named arbor_claims in the upstream token is a nested claim like any other.
  const nested = await sts(
    builder,
    await upstream('sub-builder', { ref: 'refs/heads/dev', arbor_claims: { ref: MAIN } }),
  );
  t.is(carried(nested).ref, 'refs/heads/dev');
  t.is(carried(nested)['arbor_claims.ref'], MAIN);
  t.is(await getOrg(nested), 404);
  // A value over the bound is dropped, never cut to a prefix: the condition errs, and denies.
  const long = await sts(builder, await upstream('sub-builder', { ref: MAIN + 'x'.repeat(300) }));
  t.false('ref' in carried(long));
  t.is(await getOrg(long), 404);
  // Many claims: at most 64 carried, iss and sub first, in the token's order.
  const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`c${i}`, `v${i}`]));
  const c = carried(await sts(builder, await upstream('sub-builder', many)));
  t.is(Object.keys(c).length, 64);
  t.deepEqual(Object.keys(c).slice(0, 2), ['iss', 'sub']);
  // Long claims: at most 4 KiB of them; the token stays small.
  const wide = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`w${i}`, 'v'.repeat(250)]));
  const w = carried(await sts(builder, await upstream('sub-builder', wide)));
  t.true(Buffer.byteLength(JSON.stringify(w)) <= 4096);
  t.true(Object.keys(w).length < 26);
  t.is(w.sub, 'sub-builder');
});

/** The registry token server's grant for `auth` on `scope`. */
async function registryActions(auth: string, repo: string): Promise<string[]> {
  const q = new URLSearchParams({ service: SERVICE, scope: `repository:${repo}:pull,push` });
  const r = await s.client().raw(`/auth/registry/token?${q.toString()}`, {
    headers: { authorization: auth },
  });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  const access = decodeJwt(r.body.token as string).access as { name: string; actions: string[] }[];
  return access.find((a) => a.name === repo)?.actions.sort() ?? [];
}

test('registry: a conditional push grant holds per repository, by claims and path', async (t) => {
  const here = `${folder}/app`;
  const beside = `${sibling}/app`;
  const main = await upstream('sub-pusher');
  const dev = await upstream('sub-pusher', { ref: 'refs/heads/dev' });
  // Each credential the token server takes: an API token, a registry-login token from the
  // STS, and the workload token itself with the identity uid as the username.
  const as = {
    api: async (u: string) => basic('_token', await sts(pusher, u)),
    login: async (u: string) => basic('_token', await sts(pusher, u, SERVICE)),
    workload: async (u: string) => Promise.resolve(basic(pusher, u)),
  };
  for (const [how, cred] of Object.entries(as)) {
    t.deepEqual(await registryActions(await cred(main), here), ['pull', 'push'], how);
    t.deepEqual(await registryActions(await cred(main), beside), [], `${how}: another path`);
    t.deepEqual(await registryActions(await cred(dev), here), [], `${how}: another branch`);
  }
  t.truthy(carried(await sts(pusher, main, SERVICE)), 'the registry-login token carries them');
});
