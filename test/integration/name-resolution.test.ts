import test, { type ExecutionContext } from 'ava';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { IdentitiesService } from '../../src/gen/arbor/iam/v2beta1/identities_pb.js';
import { RolesService } from '../../src/gen/arbor/iam/v2beta1/roles_pb.js';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcReply, type GrpcTestServer } from '../helpers/grpc-server.js';
import { ADMIN_TOKEN, type Client, type Reply } from '../helpers/server.js';

/**
 * Names to resources (`groups:resolve`, `identities:resolve`, `roles:resolve`) on REST and
 * gRPC. The tenant `viewer` holds the built-in viewer role at acme/platform only, so it sees
 * that subtree and nothing above or beside it; `lister` may list acme's groups but no
 * identity. A name either cannot see must be answered exactly as a name that is missing:
 * the hidden resources are asked about, deleted, and asked about again.
 */
let s: GrpcTestServer;
const uid: Record<string, string> = {};
let viewer: Client;
let lister: Client;
let viewerToken: string;

const G = '/iam/v2beta1/groups:resolve';
const I = '/iam/v2beta1/identities:resolve';
const R = '/iam/v2beta1/roles:resolve';
const q = (v: string) => encodeURIComponent(v);

test.before(async () => {
  s = await startGrpcServer();
  uid.acme = await createGroup(s.admin, 'acme');
  uid.platform = await createGroup(s.admin, 'platform', uid.acme);
  uid.sre = await createGroup(s.admin, 'sre', uid.platform);
  uid.twin1 = await createGroup(s.admin, 'twin', uid.platform);
  uid.twin2 = await createGroup(s.admin, 'twin', uid.platform);
  uid.ci = await createIdentity(s.admin, uid.platform, 'ci');
  uid.acmeBot = await createIdentity(s.admin, uid.acme, 'bot');
  uid.deployerAcme = await createRole(s.admin, uid.acme, 'deployer', ['groups.list']);
  uid.deployerPlatform = await createRole(s.admin, uid.platform, 'deployer', ['groups.list']);
  uid.deployerSre = await createRole(s.admin, uid.sre, 'deployer', ['groups.list']);
  uid.acmeOnly = await createRole(s.admin, uid.acme, 'acme-only', ['groups.list']);
  uid.viewer = await createIdentity(s.admin, uid.platform, 'tenant');
  await createBinding(s.admin, uid.platform, uid.viewer, builtinRoleUid('viewer'));
  uid.lister = await createIdentity(s.admin, uid.acme, 'lister');
  const groupsOnly = await createRole(s.admin, uid.acme, 'groups-only', ['groups.list']);
  await createBinding(s.admin, uid.acme, uid.lister, groupsOnly);
  const token = async (u: string) =>
    (await s.arbor.tokens.sign(u, { iss: ISSUER, sub: `sub-${u}` })).token;
  viewerToken = await token(uid.viewer);
  viewer = s.client(viewerToken);
  lister = s.client(await token(uid.lister));
});
test.after.always(async () => {
  await s?.close();
});

function ok(t: ExecutionContext, r: Reply, want: string): void {
  t.is(r.status, 200, JSON.stringify(r.body));
  t.is(r.body.uid, want);
}

test('the admin token resolves a group path, an identity and a role, as their Gets answer', async (t) => {
  const group = await s.admin.get(`${G}?path=${q('acme/platform/sre')}`);
  ok(t, group, uid.sre!);
  const get = await s.admin.get(`/iam/v2beta1/groups/${uid.sre}`);
  t.deepEqual(group.body, get.body);
  t.is(group.headers.get('etag'), get.headers.get('etag'));
  ok(t, await s.admin.get(`${G}?path=acme`), uid.acme!);
  const identity = await s.admin.get(`${I}?path=${q('acme/platform/ci')}`);
  ok(t, identity, uid.ci!);
  t.deepEqual(identity.body, (await s.admin.get(`/iam/v2beta1/identities/${uid.ci}`)).body);
  // A built-in by name; a custom role by the path of the group that defines it.
  ok(t, await s.admin.get(`${R}?name=editor`), builtinRoleUid('editor'));
  ok(t, await s.admin.get(`${R}?name=${q('acme/platform/deployer')}`), uid.deployerPlatform!);
  ok(t, await s.admin.get(`${R}?name=acme-only&group=${q('acme/platform/sre')}`), uid.acmeOnly!);
  ok(t, await s.admin.get(`${R}?name=acme-only&group=${q(uid.sre!)}`), uid.acmeOnly!);
});

test('a tenant names its groups from where its view starts, never through a hidden ancestor', async (t) => {
  ok(t, await viewer.get(`${G}?path=${q('platform/sre')}`), uid.sre!);
  ok(t, await viewer.get(`${I}?path=${q('platform/ci')}`), uid.ci!);
  // acme is hidden from the tenant: a path through it answers as a path that is not there.
  const through = await viewer.get(`${G}?path=${q('acme/platform/sre')}`);
  t.is(through.status, 404);
  t.is(through.body.message, 'Not found: iam.arbor.dev/Group acme/platform/sre');
  // Roles defined above its view are not candidates: only platform's deployer counts.
  ok(t, await viewer.get(`${R}?name=deployer&group=${q('platform')}`), uid.deployerPlatform!);
  ok(t, await viewer.get(`${R}?name=viewer&group=${q('platform/sre')}`), builtinRoleUid('viewer'));
});

test('an ambiguous name lists the candidates the caller can see, and only those', async (t) => {
  const twins = await viewer.get(`${G}?path=${q('platform/twin')}`);
  t.is(twins.status, 400);
  t.is(twins.body.code, 9);
  const subjects = (r: Reply) =>
    r.body.details
      .find((d: any) => d['@type'].endsWith('PreconditionFailure'))
      .violations.map((v: any) => [v.type, v.subject]);
  t.deepEqual(subjects(twins), [
    ['AMBIGUOUS_NAME', [uid.twin1!, uid.twin2!].sort()[0]],
    ['AMBIGUOUS_NAME', [uid.twin1!, uid.twin2!].sort()[1]],
  ]);
  // Three deployers along acme/platform/sre; the tenant cannot see acme's.
  const roles = await viewer.get(`${R}?name=deployer&group=${q('platform/sre')}`);
  t.is(roles.status, 400);
  t.deepEqual(
    subjects(roles).map(([, u]: string[]) => u),
    [uid.deployerPlatform!, uid.deployerSre!].sort(),
  );
  t.false(JSON.stringify(roles.body).includes(uid.deployerAcme!));
  const admin = await s.admin.get(`${R}?name=deployer&group=${q('acme/platform/sre')}`);
  t.is(subjects(admin).length, 3);
});

test('malformed paths are INVALID_ARGUMENT naming the parameter', async (t) => {
  for (const bad of ['', 'acme//platform', '/acme', 'acme/', 'Acme', `${'a'.repeat(64)}`]) {
    const r = await s.admin.get(`${G}?path=${q(bad)}`);
    t.is(r.status, 400, bad);
    t.is(r.body.code, 3, bad);
    t.is(r.body.details[1].fieldViolations[0].field, 'path', bad);
  }
  const none = await s.admin.get(G);
  t.is(none.status, 400);
  const both = await s.admin.get(`${R}?name=${q('acme/deployer')}&group=acme`);
  t.is(both.body.details[1].fieldViolations[0].field, 'group');
});

/** The REST and gRPC answers to one question, as comparable values. */
async function ask(
  c: Client,
  grpcToken: string,
  path: string,
  service: typeof GroupsService | typeof IdentitiesService | typeof RolesService,
  method: string,
  req: Record<string, string>,
): Promise<{ rest: Reply['body']; status: number; grpc: GrpcReply }> {
  const rest = await c.get(path);
  const caller = s.grpc(grpcToken);
  try {
    return { rest: rest.body, status: rest.status, grpc: await caller.call(service, method, req) };
  } finally {
    caller.close();
  }
}

test.serial('a hidden name answers exactly as a missing one, on REST and gRPC', async (t) => {
  const hiddenOrg = await createGroup(s.admin, 'hush-org');
  const hiddenFolder = await createGroup(s.admin, 'inner', hiddenOrg);
  const hiddenIdentity = await createIdentity(s.admin, hiddenFolder, 'hush-bot');
  const hiddenRole = await createRole(s.admin, hiddenOrg, 'hush-role', ['groups.list']);
  // Visible to `lister` as a group, hidden as an identity (no identity.list).
  const listerHidden = await createIdentity(s.admin, uid.platform!, 'quiet');
  const listerToken = (
    await s.arbor.tokens.sign(uid.lister!, { iss: ISSUER, sub: `sub-${uid.lister}` })
  ).token;
  const questions = [
    [
      viewer,
      viewerToken,
      `${G}?path=${q('hush-org/inner')}`,
      GroupsService,
      'ResolveGroup',
      { path: 'hush-org/inner' },
    ],
    [
      viewer,
      viewerToken,
      `${G}?path=${q('hush-org')}`,
      GroupsService,
      'ResolveGroup',
      { path: 'hush-org' },
    ],
    [
      viewer,
      viewerToken,
      `${I}?path=${q('hush-org/inner/hush-bot')}`,
      IdentitiesService,
      'ResolveIdentity',
      { path: 'hush-org/inner/hush-bot' },
    ],
    [
      viewer,
      viewerToken,
      `${R}?name=hush-role`,
      RolesService,
      'ResolveRole',
      { name: 'hush-role' },
    ],
    [
      viewer,
      viewerToken,
      `${R}?name=${q('hush-org/hush-role')}`,
      RolesService,
      'ResolveRole',
      { name: 'hush-org/hush-role' },
    ],
    [
      lister,
      listerToken,
      `${I}?path=${q('acme/platform/quiet')}`,
      IdentitiesService,
      'ResolveIdentity',
      { path: 'acme/platform/quiet' },
    ],
  ] as const;
  const before = [];
  for (const [c, token, path, svc, m, req] of questions)
    before.push(await ask(c, token, path, svc, m, req));
  for (const [i, a] of before.entries()) {
    t.is(a.status, 404, `${i}: ${JSON.stringify(a.rest)}`);
    t.false(a.grpc.ok);
    if (!a.grpc.ok) {
      t.is(a.grpc.code, 5);
      t.deepEqual(a.grpc.status, a.rest, `${i}: gRPC and REST give one status`);
    }
  }
  // The admin sees every one of them.
  ok(t, await s.admin.get(`${I}?path=${q('hush-org/inner/hush-bot')}`), hiddenIdentity);
  ok(t, await s.admin.get(`${R}?name=hush-role`), hiddenRole);
  ok(t, await s.admin.get(`${I}?path=${q('acme/platform/quiet')}`), listerHidden);
  for (const u of [hiddenIdentity, listerHidden])
    await s.admin.delete(`/iam/v2beta1/identities/${u}`);
  await s.admin.delete(`/iam/v2beta1/roles/${hiddenRole}`);
  await s.admin.delete(`/iam/v2beta1/groups/${hiddenFolder}`);
  await s.admin.delete(`/iam/v2beta1/groups/${hiddenOrg}`);
  t.is((await s.admin.get(`${G}?path=hush-org`)).status, 404, 'deleted');
  const after = [];
  for (const [c, token, path, svc, m, req] of questions)
    after.push(await ask(c, token, path, svc, m, req));
  t.deepEqual(after, before);
});

test('gRPC resolves as REST does', async (t) => {
  const cases = [
    [
      `${G}?path=${q('acme/platform/sre')}`,
      GroupsService,
      'ResolveGroup',
      { path: 'acme/platform/sre' },
    ],
    [
      `${I}?path=${q('acme/platform/ci')}`,
      IdentitiesService,
      'ResolveIdentity',
      { path: 'acme/platform/ci' },
    ],
    [
      `${R}?name=deployer&group=${q('acme/platform')}`,
      RolesService,
      'ResolveRole',
      { name: 'deployer', group: 'acme/platform' },
    ],
    [
      `${G}?path=${q('acme/platform/twin')}`,
      GroupsService,
      'ResolveGroup',
      { path: 'acme/platform/twin' },
    ],
  ] as const;
  for (const [path, svc, m, req] of cases) {
    const a = await ask(s.admin, ADMIN_TOKEN, path, svc, m, req);
    const grpc = a.grpc;
    if (a.status === 200) {
      t.true(grpc.ok, m);
      if (grpc.ok) t.is(grpc.json.uid, a.rest.uid);
    } else {
      t.false(grpc.ok);
      if (!grpc.ok) t.deepEqual(grpc.status, a.rest);
    }
  }
  // An ambiguity is FAILED_PRECONDITION on gRPC too.
  const twin = await s.grpcAdmin.call(GroupsService, 'ResolveGroup', {
    path: 'acme/platform/twin',
  });
  t.false(twin.ok);
  if (!twin.ok) t.is(twin.code, 9);
});
