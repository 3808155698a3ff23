import test from 'ava';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { createIdentity, createRole, fields, ISSUER } from '../helpers/iam-fixtures.js';
import { runArbor } from '../helpers/cli-run.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { ADMIN_TOKEN } from '../helpers/server.js';

/**
 * A check may name the request it asks about (`resource`, `claims`): each conditional
 * binding is evaluated with them in the proof. A question, not a grant: it shows no
 * binding the caller could not list without them, and changes nothing the caller may do.
 */
let s: GrpcTestServer;
let org: string;
let images: string;
let ci: string;
let bindingUid: string;
let viewer: string;
let viewerToken: string;
let expression: string;
const MAIN = 'refs/heads/main';
const CHECK = '/iam/v2beta1/access:check';

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'asked-org');
  images = await createGroup(s.admin, 'images', org);
  const pusher = await createRole(s.admin, org, 'pusher', ['manifest.create', 'groups.list']);
  ci = await createIdentity(s.admin, org, 'ci');
  expression = `token.claims.ref == "${MAIN}" && resource.name.startsWith("${images}/")`;
  const bound = await s.admin.post(`/iam/v2beta1/roleBindings/${org}`, {
    identityUid: ci,
    roleUid: pusher,
    condition: { expression, title: 'main pushes images' },
  });
  if (bound.status !== 200) throw new Error(JSON.stringify(bound.body));
  bindingUid = bound.body.uid as string;
  // May list identities and groups, but not role bindings: sees no binding of ci's.
  const looker = await createRole(s.admin, org, 'looker', ['identity.list', 'groups.list']);
  viewer = await createIdentity(s.admin, org, 'viewer');
  const v = await s.admin.post(`/iam/v2beta1/roleBindings/${org}`, {
    identityUid: viewer,
    roleUid: looker,
  });
  if (v.status !== 200) throw new Error(JSON.stringify(v.body));
  viewerToken = (await s.arbor.tokens.sign(viewer, { iss: ISSUER, sub: 'sub-viewer' })).token;
});
test.after.always(() => s?.close());

const asked = (ref: string, name: string) => ({
  identityUid: ci,
  capability: 'manifest.create',
  groupUid: images,
  resource: { type: 'repository', name },
  claims: { ref, repository: 'acme/platform', run_attempt: 1, protected: true },
});

test('a feature branch is denied: the proof shows the claim it read', async (t) => {
  const r = await s.admin.post(CHECK, asked('refs/heads/feature', `${images}/app`));
  t.is(r.status, 200, JSON.stringify(r.body));
  t.false(r.body.allowed);
  t.deepEqual(r.body.grants, []);
  t.is(r.body.conditional?.[0]?.bindingUid, bindingUid);
  t.like(r.body.conditional?.[0]?.condition, {
    expression,
    title: 'main pushes images',
    result: false,
    // `token.claims` is shown whole (what the caller sent), as a decision's values show it.
    values: { 'token.claims': { ref: 'refs/heads/feature' } },
  });
});

test('main and a repository inside: allowed, the condition in the grant proof', async (t) => {
  const r = await s.admin.post(CHECK, asked(MAIN, `${images}/app`));
  t.is(r.status, 200, JSON.stringify(r.body));
  t.true(r.body.allowed);
  t.is(r.body.grants[0]?.bindingUid, bindingUid);
  t.like(r.body.grants[0]?.condition, {
    expression,
    result: true,
    values: { 'token.claims': { ref: MAIN }, 'resource.name': `${images}/app` },
  });
  // Main, but a repository outside the prefix: denied, the name it read shown.
  const out = await s.admin.post(CHECK, asked(MAIN, `${org}/tools/app`));
  t.false(out.body.allowed);
  t.like(out.body.conditional?.[0]?.condition, {
    result: false,
    values: { 'resource.name': `${org}/tools/app` },
  });
});

test('without a request the answer is as before: no claims, resource ""', async (t) => {
  const r = await s.admin.post(CHECK, {
    identityUid: ci,
    capability: 'manifest.create',
    groupUid: images,
  });
  t.is(r.status, 200);
  t.false(r.body.allowed);
  const c = r.body.conditional?.[0]?.condition;
  t.is(c?.result, false);
  t.deepEqual(c?.values?.['token.claims'] ?? {}, {}, JSON.stringify(c));
});

test('batch: each question its own request', async (t) => {
  const r = await s.admin.post('/iam/v2beta1/access:batchCheck', {
    checks: [asked(MAIN, `${images}/a`), asked('refs/heads/x', `${images}/a`)],
  });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.deepEqual(
    r.body.results.map((x: { allowed: boolean }) => x.allowed),
    [true, false],
  );
});

test('gRPC answers as REST does', async (t) => {
  for (const ref of [MAIN, 'refs/heads/feature']) {
    const body = asked(ref, `${images}/app`);
    const rest = await s.admin.post(CHECK, body);
    const g = await s.grpcAdmin.call(AccessService, 'CheckAccess', body);
    t.true(g.ok, JSON.stringify(g));
    if (!g.ok) return;
    t.is(g.json.allowed ?? false, rest.body.allowed);
    const proof = (rest.body.allowed ? g.json.grants : g.json.conditional)?.[0];
    const restProof = (rest.body.allowed ? rest.body.grants : rest.body.conditional)[0];
    t.is(proof?.condition?.result ?? false, restProof.condition.result);
    t.deepEqual(proof?.condition?.values, restProof.condition.values);
  }
  const batch = await s.grpcAdmin.call(AccessService, 'BatchCheckAccess', {
    checks: [asked(MAIN, `${images}/app`)],
  });
  t.true(batch.ok && batch.json.results[0].allowed === true, JSON.stringify(batch));
});

const tooMany = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`c${i}`, 'x']));
const tooBig = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`c${i}`, 'x'.repeat(250)]));
/** Each: what, the fields added to a good check, the field named, and whether gRPC can send it. */
const bad: [string, Record<string, unknown>, RegExp, boolean?][] = [
  ['a string over 256', { claims: { ref: 'x'.repeat(257) } }, /^claims\.ref$/],
  ['a name over 128', { claims: { ['n'.repeat(129)]: 'x' } }, /^claims\.n{129}$/],
  ['an empty name', { claims: { '': 'x' } }, /^claims\.?$/],
  ['65 claims', { claims: tooMany }, /^claims$/],
  ['over 4 KiB', { claims: tooBig }, /^claims$/],
  ['an array', { claims: { ref: ['a'] } }, /^claims\.ref$/],
  ['an object', { claims: { ref: { a: 'b' } } }, /^claims\.ref$/],
  ['null', { claims: { ref: null } }, /^claims\.ref$/],
  ['claims not an object', { claims: 'ref=main' }, /^claims$/, false],
  ['a type over 256', { resource: { type: 't'.repeat(257), name: 'n' } }, /^resource\.type$/],
  ['a name over 1,024', { resource: { type: 't', name: 'n'.repeat(1025) } }, /^resource\.name$/],
  [
    'an unknown resource field',
    { resource: { type: 't', name: 'n', x: 1 } },
    /^resource\.x$/,
    false,
  ],
];

for (const [what, extra, field, grpc = true] of bad)
  test(`REST and gRPC: ${what} is INVALID_ARGUMENT naming the field`, async (t) => {
    const body = { identityUid: ci, capability: 'manifest.create', groupUid: images, ...extra };
    const r = await s.admin.post(CHECK, body);
    t.is(r.status, 400, JSON.stringify(r.body));
    t.true(
      fields(r.body).some((f) => field.test(f)),
      JSON.stringify(fields(r.body)),
    );
    const b = await s.admin.post('/iam/v2beta1/access:batchCheck', { checks: [body] });
    t.is(b.status, 400);
    t.true(
      fields(b.body).some((f) => f.startsWith('checks.0.')),
      JSON.stringify(fields(b.body)),
    );
    // A string for a map or an unknown field has no protobuf encoding at all.
    if (!grpc) return;
    const g = await s.grpcAdmin.call(AccessService, 'CheckAccess', body);
    t.is(g.ok ? 0 : g.code, 3, JSON.stringify(g));
    t.regex(JSON.stringify(g), /claims|resource/);
  });

test('a caller who cannot list the binding learns nothing more with claims', async (t) => {
  const as = s.client(viewerToken);
  const without = await as.post(CHECK, {
    identityUid: ci,
    capability: 'manifest.create',
    groupUid: images,
  });
  t.is(without.status, 200, JSON.stringify(without.body));
  for (const ref of [MAIN, 'refs/heads/feature']) {
    const withClaims = await as.post(CHECK, asked(ref, `${images}/app`));
    t.is(withClaims.status, 200);
    t.deepEqual(withClaims.body, without.body);
    t.false(withClaims.body.allowed);
    t.false(JSON.stringify(withClaims.body).includes(bindingUid));
  }
});

test('a question, not a grant: a self check with claims leaves the plain one as it was', async (t) => {
  const token = (await s.arbor.tokens.sign(ci, { iss: ISSUER, sub: 'sub-ci' })).token;
  const as = s.client(token);
  const plain = { capability: 'manifest.create', groupUid: images };
  const before = await as.post(CHECK, plain);
  t.false(before.body.allowed);
  const { identityUid: _, ...self } = asked(MAIN, `${images}/app`);
  const hypo = await as.post(CHECK, self);
  t.true(hypo.body.allowed, JSON.stringify(hypo.body));
  // Neither remembered as the answer without a request, nor a grant to the token itself.
  t.false((await as.post(CHECK, plain)).body.allowed);
  t.is((await as.get(`/iam/v2beta1/groups/${images}`)).status, 404);
});

test('CLI: can-i --resource-type, --resource-name and --claim', async (t) => {
  const arbor = (args: string[]) =>
    runArbor([...args, '--api', s.url], { ARBOR_TOKEN: ADMIN_TOKEN, HOME: '/nonexistent' });
  const base = ['can-i', 'manifest.create', '--group', images, '--as', ci];
  const req = ['--resource-type', 'repository', '--resource-name', `${images}/app`];
  const yes = await arbor([...base, ...req, '--claim', `ref=${MAIN}`, '--explain']);
  t.is(yes.code, 0, yes.stderr);
  t.regex(yes.stdout, /^yes/);
  const no = await arbor([...base, ...req, '--claim', 'ref=refs/heads/feature', '-o', 'json']);
  t.is(no.code, 1, no.stderr);
  t.like(JSON.parse(no.stdout).conditional[0].condition.values, {
    'token.claims': { ref: 'refs/heads/feature' },
  });
  const usage = await arbor([...base, '--claim', 'no-equals']);
  t.not(usage.code, 0);
  t.not(usage.code, 1);
  t.regex(usage.stderr, /--claim takes name=value/);
});
