import { fileURLToPath } from 'node:url';
import type { DescService } from '@bufbuild/protobuf';
import test, { type ExecutionContext } from 'ava';
import { ADMIN } from '../../src/auth/principal.js';
import { AccountAssociationsService } from '../../src/gen/arbor/iam/v2beta1/account_associations_pb.js';
import { GroupInvitesService } from '../../src/gen/arbor/iam/v2beta1/group_invites_pb.js';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { IdentitiesService } from '../../src/gen/arbor/iam/v2beta1/identities_pb.js';
import { IdentityProvidersService } from '../../src/gen/arbor/iam/v2beta1/identity_providers_pb.js';
import { RoleBindingsService } from '../../src/gen/arbor/iam/v2beta1/role_bindings_pb.js';
import { RolesService } from '../../src/gen/arbor/iam/v2beta1/roles_pb.js';
import { ReposService } from '../../src/gen/arbor/registry/v2beta1/repos_pb.js';
import { TagsService } from '../../src/gen/arbor/registry/v2beta1/tags_pb.js';
import { SecurityTokenService } from '../../src/gen/arbor/sts/v2beta1/sts_pb.js';
import { AdvisoriesService } from '../../src/gen/arbor/vulnerabilities/v2beta1/advisories_pb.js';
import { Health } from '../../src/gen/grpc/health/v1/health_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcReply, type GrpcTestServer } from '../helpers/grpc-server.js';
import type { Reply } from '../helpers/server.js';

/* eslint-disable max-lines -- one table of resources, one suite */
/**
 * The gRPC door against the REST door on the same server: every v2beta1 resource's
 * create / get / list / update / delete and its errors, through a real @grpc/grpc-js
 * client, must give what REST gives. "The same" is proto3's notion of it: fields at their
 * default ("", false, 0, empty lists and maps) are absent on the gRPC side, and a
 * timestamp is the same instant (proto3 JSON may drop a `.000`).
 */
let s: GrpcTestServer;
let org: string;
let viewer: string;
let editor: string;

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'parity-org');
  const roles = (await s.admin.get('/iam/v2beta1/roles?page_size=200')).body.roles as any[];
  viewer = roles.find((r) => r.name === 'viewer').uid;
  editor = roles.find((r) => r.name === 'editor').uid;
  await s.arbor.services.vulnerabilities.advisoryImport.import(
    ADMIN,
    fileURLToPath(new URL('../fixtures/osv', import.meta.url)),
  );
});
test.after.always(async () => {
  await s?.close();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Drop what proto3 cannot tell from absent; canonicalize timestamps. */
function norm(v: any, key = ''): any {
  if (typeof v === 'string' && ISO.test(v)) return new Date(v).toISOString();
  if (Array.isArray(v)) return v.map((x) => norm(x));
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === 'nextPageToken') continue;
      const n = norm(x, k);
      const empty =
        n === '' ||
        n === false ||
        n === 0 ||
        n === null ||
        (k === 'totalCount' && n === '0') ||
        (Array.isArray(n) && n.length === 0) ||
        (typeof n === 'object' && n !== null && Object.keys(n).length === 0);
      if (!empty) out[k] = n;
    }
    return out;
  }
  return key === '' ? v : v;
}

/** The two doors answered the same: the same resource, or the same google.rpc.Status. */
function same(t: ExecutionContext, rest: Reply, grpc: GrpcReply, what: string): void {
  if (rest.status === 200) {
    if (!grpc.ok) {
      t.fail(`${what}: REST 200 but gRPC ${grpc.code} ${JSON.stringify(grpc.status)}`);
      return;
    }
    t.deepEqual(norm(grpc.json), norm(rest.body), what);
    t.is(Boolean(grpc.json.nextPageToken), Boolean(rest.body?.nextPageToken), `${what}: next page`);
  } else {
    if (grpc.ok) {
      t.fail(`${what}: REST ${rest.status} ${JSON.stringify(rest.body)} but gRPC OK`);
      return;
    }
    t.is(grpc.code, rest.body.code, `${what}: code`);
    t.deepEqual(norm(grpc.status), norm(rest.body), `${what}: status`);
  }
}

interface Resource {
  title: string;
  service: DescService;
  kind: string;
  plural: string;
  path: string;
  /** The request field holding the resource. */
  field: string;
  /** A fresh parent for the i-th create. */
  parent(i: number): Promise<string>;
  body(i: number): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** A masked update: the mask, and a body with more than the mask names. */
  update?: { mask: string; body: Record<string, unknown> };
  /** Fields only a create response has. */
  createOnly?: string[];
  invalid(): Record<string, unknown>;
  /** Extra list filters this resource takes, with a value that selects the first item. */
  filter?(first: any): Record<string, string>;
}

let seq = 0;
const qs = (q: Record<string, string>) => new URLSearchParams(q).toString();
const hex = (n: number) => n.toString(16).padStart(64, '0');

const RESOURCES: Resource[] = [
  {
    title: 'groups',
    service: GroupsService,
    kind: 'Group',
    plural: 'Groups',
    path: '/iam/v2beta1/groups',
    field: 'group',
    parent: () => Promise.resolve(org),
    body: (i) => ({ name: `group-${i}`, description: `folder ${i}` }),
    update: { mask: 'description', body: { name: 'not-this', description: 'changed' } },
    invalid: () => ({ name: 'NOT VALID!' }),
    filter: (g) => ({ name: g.name }),
  },
  {
    title: 'identities',
    service: IdentitiesService,
    kind: 'Identity',
    plural: 'Identities',
    path: '/iam/v2beta1/identities',
    field: 'identity',
    parent: () => Promise.resolve(org),
    body: (i) => ({
      name: `identity-${i}`,
      claimMatch: { issuer: 'https://issuer.example.com', subject: `subject-${i}` },
    }),
    update: {
      mask: 'description,claimMatch',
      body: {
        name: 'not-this',
        description: 'changed',
        claimMatch: { issuer: 'https://other.example.com', subjectPattern: 'repo:.*' },
      },
    },
    invalid: () => ({ name: 'x', claimMatch: { issuer: 'not a url' } }),
    filter: (x) => ({ name: x.name }),
  },
  {
    title: 'roles',
    service: RolesService,
    kind: 'Role',
    plural: 'Roles',
    path: '/iam/v2beta1/roles',
    field: 'role',
    parent: () => Promise.resolve(org),
    body: (i) => ({ name: `role-${i}`, capabilities: ['groups.list', 'repo.list'] }),
    update: { mask: 'capabilities', body: { capabilities: ['identity.list'], name: 'not-this' } },
    invalid: () => ({ name: 'r', capabilities: ['no.such'] }),
    filter: (x) => ({ name: x.name }),
  },
  {
    title: 'role bindings',
    service: RoleBindingsService,
    kind: 'RoleBinding',
    plural: 'RoleBindings',
    path: '/iam/v2beta1/roleBindings',
    field: 'roleBinding',
    parent: () => Promise.resolve(org),
    body: async (i) => ({
      identityUid: await createIdentity(s.admin, org, `bound-${i}`),
      roleUid: viewer,
    }),
    update: {
      mask: 'roleUid',
      get body() {
        return { roleUid: editor };
      },
    },
    invalid: () => ({ identityUid: 'nope', roleUid: viewer }),
    filter: (x) => ({ identity: x.identity.uid }),
  },
  {
    title: 'identity providers',
    service: IdentityProvidersService,
    kind: 'IdentityProvider',
    plural: 'IdentityProviders',
    path: '/iam/v2beta1/identityProviders',
    field: 'identityProvider',
    parent: () => Promise.resolve(org),
    body: (i) => ({
      name: `idp-${i}`,
      defaultRole: viewer,
      oidc: {
        issuer: 'https://idp.example.com',
        clientId: `client-${i}`,
        clientSecret: 'secret',
        additionalScopes: ['email'],
      },
    }),
    update: { mask: 'description', body: { description: 'changed', name: 'not-this' } },
    invalid: () => ({
      name: 'idp',
      defaultRole: viewer,
      oidc: { issuer: 'https://idp.example.com' },
    }),
    filter: (x) => ({ name: x.name }),
  },
  {
    title: 'account associations',
    service: AccountAssociationsService,
    kind: 'AccountAssociation',
    plural: 'AccountAssociations',
    path: '/iam/v2beta1/accountAssociations',
    field: 'accountAssociation',
    parent: (i) => createGroup(s.admin, `assoc-${i}`, org),
    body: (i) => ({
      name: `assoc-${i}`,
      amazon: { account: '123456789012' },
      google: { projectId: 'my-project-1' },
    }),
    update: { mask: 'amazon,description', body: { description: 'changed', name: 'not-this' } },
    invalid: () => ({ name: 'a', amazon: { account: '12' } }),
    filter: (x) => ({ group: x.uid }),
  },
  {
    title: 'group invites',
    service: GroupInvitesService,
    kind: 'GroupInvite',
    plural: 'GroupInvites',
    path: '/iam/v2beta1/groupInvites',
    field: 'groupInvite',
    parent: () => Promise.resolve(org),
    body: (i) => ({
      roleUid: viewer,
      ttl: '3600s',
      email: `user${i}@example.com`,
      singleUse: i % 2 === 0,
    }),
    createOnly: ['code'],
    update: {
      mask: 'expirationTime',
      body: {
        expirationTime: new Date(Date.now() + 7_200_000).toISOString(),
        roleUid: 'not-this',
      },
    },
    invalid: () => ({ roleUid: viewer, ttl: '1s' }),
  },
  {
    title: 'repos',
    service: ReposService,
    kind: 'Repo',
    plural: 'Repos',
    path: '/registry/v2beta1/repos',
    field: 'repo',
    parent: () => Promise.resolve(org),
    body: (i) => ({ name: `repo-${i}`, description: 'images' }),
    update: { mask: 'description', body: { description: '', name: 'not-this' } },
    invalid: () => ({ name: 'UPPER' }),
    filter: (x) => ({ name: x.name }),
  },
  {
    title: 'tags',
    service: TagsService,
    kind: 'Tag',
    plural: 'Tags',
    path: '/registry/v2beta1/tags',
    field: 'tag',
    parent: async (i) =>
      (await s.admin.post(`/registry/v2beta1/repos/${org}`, { name: `tagged-${i}` })).body.uid,
    body: (i) => ({ name: `v${i}`, digest: `sha256:${hex(i)}`, deprecated: i % 2 === 1 }),
    invalid: () => ({ name: 'v1', digest: 'md5:00' }),
    filter: (x) => ({ digest: x.digest }),
  },
];

async function createBoth(r: Resource): Promise<{ viaRest: any; viaGrpc: GrpcReply }> {
  const i1 = ++seq;
  const rest = await s.admin.post(`${r.path}/${await r.parent(i1)}`, await r.body(i1));
  if (rest.status !== 200) throw new Error(`REST create ${r.title}: ${JSON.stringify(rest.body)}`);
  const i2 = ++seq;
  const viaGrpc = await s.grpcAdmin.call(r.service, `Create${r.kind}`, {
    parent: await r.parent(i2),
    [r.field]: await r.body(i2),
  });
  return { viaRest: rest.body, viaGrpc };
}

const without = (o: any, keys: string[] = []) =>
  Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

for (const r of RESOURCES) {
  test.serial(`${r.title}: create and get answer the same through gRPC and REST`, async (t) => {
    const { viaRest, viaGrpc } = await createBoth(r);
    t.true(viaGrpc.ok, JSON.stringify(viaGrpc));
    if (!viaGrpc.ok) return;
    const made = viaGrpc.json;
    // What gRPC created, REST reads back; what REST created, gRPC reads back.
    const restGet = await s.admin.get(`${r.path}/${made.uid}`);
    t.deepEqual(norm(without(made, r.createOnly)), norm(restGet.body));
    same(
      t,
      await s.admin.get(`${r.path}/${viaRest.uid}`),
      await s.grpcAdmin.call(r.service, `Get${r.kind}`, { uid: viaRest.uid }),
      'get',
    );
    same(
      t,
      { status: 200, body: without(viaRest, r.createOnly), headers: new Headers() },
      await s.grpcAdmin.call(r.service, `Get${r.kind}`, { uid: viaRest.uid }),
      'create answer',
    );
  });

  test.serial(
    `${r.title}: list filters, orders, pages and skips the same through both`,
    async (t) => {
      await createBoth(r);
      await createBoth(r);
      const queries: Array<Record<string, string>> = [
        {},
        { 'uidp.descendants_of': org },
        { page_size: '2', order_by: 'created_at desc' },
        { page_size: '2', skip: '1', order_by: 'uid' },
        { page_size: '1', skip: '3' },
      ];
      const all = (await s.admin.get(`${r.path}?page_size=200`)).body;
      const first = Object.values(all).find(Array.isArray)?.[0];
      if (r.filter && first) queries.push(r.filter(first));
      for (const q of queries) {
        const rest = await s.admin.get(`${r.path}?${qs(q)}`);
        const grpc = await s.grpcAdmin.call(r.service, `List${r.plural}`, requestOf(q));
        same(t, rest, grpc, `list ${JSON.stringify(q)}`);
        // Page tokens are one contract: each door continues the other's.
        if (rest.status === 200 && grpc.ok && rest.body.nextPageToken) {
          const restNext = await s.admin.get(
            `${r.path}?${qs({ ...q, page_token: grpc.json.nextPageToken })}`,
          );
          const grpcNext = await s.grpcAdmin.call(
            r.service,
            `List${r.plural}`,
            requestOf({ ...q, page_token: rest.body.nextPageToken }),
          );
          same(t, restNext, grpcNext, `next page of ${JSON.stringify(q)}`);
        }
      }
    },
  );

  test.serial(`${r.title}: errors carry the same google.rpc.Status through both`, async (t) => {
    const parent = await r.parent(++seq);
    same(
      t,
      await s.admin.post(`${r.path}/${parent}`, r.invalid()),
      await s.grpcAdmin.call(r.service, `Create${r.kind}`, { parent, [r.field]: r.invalid() }),
      'invalid create',
    );
    const missing = `${org}/0123456789abcdef`;
    same(
      t,
      await s.admin.get(`${r.path}/${missing}`),
      await s.grpcAdmin.call(r.service, `Get${r.kind}`, { uid: missing }),
      'missing',
    );
    same(
      t,
      await s.admin.get(`${r.path}/not-a-uid`),
      await s.grpcAdmin.call(r.service, `Get${r.kind}`, { uid: 'not-a-uid' }),
      'bad uid',
    );
    const bad: Record<string, string>[] = [
      { order_by: 'nope' },
      { page_size: '-1' },
      { skip: '99999' },
      { page_token: 'forged' },
    ];
    for (const q of bad) {
      same(
        t,
        await s.admin.get(`${r.path}?${qs(q)}`),
        await s.grpcAdmin.call(r.service, `List${r.plural}`, requestOf(q)),
        `list ${JSON.stringify(q)}`,
      );
    }
    same(
      t,
      await s.client().get(r.path),
      await s.grpc().call(r.service, `List${r.plural}`, {}),
      'anonymous',
    );
  });

  if (r.update) {
    const u = r.update;
    test.serial(
      `${r.title}: update with a mask changes the same fields through both`,
      async (t) => {
        const { viaRest, viaGrpc } = await createBoth(r);
        if (!viaGrpc.ok) return t.fail(JSON.stringify(viaGrpc));
        const rest = await s.admin.patch(`${r.path}/${viaRest.uid}?updateMask=${u.mask}`, u.body);
        const grpc = await s.grpcAdmin.call(r.service, `Update${r.kind}`, {
          [r.field]: { ...u.body, uid: viaGrpc.json.uid },
          updateMask: u.mask,
        });
        t.is(rest.status, 200, JSON.stringify(rest.body));
        if (!grpc.ok) return t.fail(JSON.stringify(grpc));
        // Different resources, so compare what changed and what did not.
        const strip = (x: any) =>
          without(
            norm(x),
            [
              'uid',
              'name',
              'createTime',
              'updateTime',
              'identity',
              'oidc',
              'lastSeenTime',
              'staticKeys',
              'group',
              'role',
              // Set per creation by the cases' bodies (invites), so they differ between the two.
              'email',
              'singleUse',
            ].filter((k) => !u.mask.includes(k)),
          );
        const keep = (x: any, y: any) => t.deepEqual(strip(x), strip(y));
        keep(grpc.json, rest.body);
        same(t, await s.admin.get(`${r.path}/${viaGrpc.json.uid}`), grpc, 'read back');
        // An unknown mask path is refused alike.
        same(
          t,
          await s.admin.patch(`${r.path}/${viaRest.uid}?updateMask=no_such_field`, {}),
          await s.grpcAdmin.call(r.service, `Update${r.kind}`, {
            [r.field]: { uid: viaGrpc.json.uid },
            updateMask: 'noSuchField',
          }),
          'unknown mask path',
        );
      },
    );
  }

  test.serial(`${r.title}: delete removes through gRPC as through REST`, async (t) => {
    const { viaRest, viaGrpc } = await createBoth(r);
    if (!viaGrpc.ok) return t.fail(JSON.stringify(viaGrpc));
    const del = await s.grpcAdmin.call(r.service, `Delete${r.kind}`, { uid: viaGrpc.json.uid });
    t.deepEqual(del, { ok: true, code: 0, json: {} });
    t.is((await s.admin.delete(`${r.path}/${viaRest.uid}`)).status, 200);
    for (const uid of [viaRest.uid, viaGrpc.json.uid]) {
      same(
        t,
        await s.admin.get(`${r.path}/${uid}`),
        await s.grpcAdmin.call(r.service, `Get${r.kind}`, { uid }),
        'gone',
      );
    }
  });
}

/** The List request message (as proto3 JSON) of a REST query. */
function requestOf(q: Record<string, string>): Record<string, unknown> {
  const out: Record<string, any> = {};
  for (const [k, v] of Object.entries(q)) {
    if (k.startsWith('uidp.')) {
      out.uidp = {
        ...out.uidp,
        [k.slice(5).replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())]: v,
      };
    } else if (k === 'page_size' || k === 'skip') {
      out[k === 'skip' ? 'skip' : 'pageSize'] = Number(v);
    } else {
      out[k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())] = v;
    }
  }
  return out;
}

test.serial('advisories: get and list answer the same through both', async (t) => {
  const P = '/vulnerabilities/v2beta1/advisories';
  const all = (await s.admin.get(`${P}?page_size=200`)).body.advisories as any[];
  t.true(all.length >= 3);
  for (const a of all) {
    same(
      t,
      await s.admin.get(`${P}/${a.uid}`),
      await s.grpcAdmin.call(AdvisoriesService, 'GetAdvisory', { uid: a.uid }),
      `get ${a.id}`,
    );
  }
  const queries: Record<string, string>[] = [
    {},
    { order_by: 'modified desc', page_size: '1' },
    { skip: '1' },
    { id: all[0].id },
    { ecosystem: 'Go' },
    { order_by: 'severity' },
  ];
  for (const q of queries) {
    same(
      t,
      await s.admin.get(`${P}?${qs(q)}`),
      await s.grpcAdmin.call(AdvisoriesService, 'ListAdvisories', requestOf(q)),
      `list ${JSON.stringify(q)}`,
    );
  }
});

test.serial('audit: a change through gRPC is recorded as made through the grpc door', async (t) => {
  const made = await s.grpcAdmin.call(GroupsService, 'CreateGroup', {
    parent: org,
    group: { name: 'audited-by-grpc' },
  });
  if (!made.ok) return t.fail(JSON.stringify(made));
  const q = `/audit/v2beta1/events?resource_uid=${encodeURIComponent(made.json.uid)}`;
  const events = (await s.admin.get(q)).body.events as Array<Record<string, unknown>>;
  t.deepEqual(
    events.map((e) => [e.operation, e.door, e.actor]),
    [['create', 'grpc', 'admin']],
  );
  t.truthy(events[0]!.requestId);
});

test.serial('group invites: redeem binds through gRPC as through REST', async (t) => {
  const grp = await createGroup(s.admin, 'invited', org);
  const who = await createIdentity(s.admin, org, 'redeemer');
  const token = (await s.arbor.tokens.sign(who, { iss: 'https://test.invalid', sub: who })).token;
  const invite = await s.grpcAdmin.call(GroupInvitesService, 'CreateGroupInvite', {
    parent: grp,
    groupInvite: { roleUid: viewer, ttl: '600s' },
  });
  if (!invite.ok) return t.fail(JSON.stringify(invite));
  const redeemed = await s
    .grpc(token)
    .call(GroupInvitesService, 'RedeemGroupInvite', { code: invite.json.code });
  if (!redeemed.ok) return t.fail(JSON.stringify(redeemed));
  t.is(redeemed.json.identity.uid, who);
  t.is(redeemed.json.group.uid, grp);
  same(t, await s.admin.get(`/iam/v2beta1/roleBindings/${redeemed.json.uid}`), redeemed, 'binding');
  same(
    t,
    await s.client(token).post('/iam/v2beta1/groupInvites:redeem', { code: 'bogus' }),
    await s.grpc(token).call(GroupInvitesService, 'RedeemGroupInvite', { code: 'bogus' }),
    'bad code',
  );
});

test.serial(
  'authorization: a viewer sees through gRPC exactly its subtree, as through REST',
  async (t) => {
    const folder = await createGroup(s.admin, 'viewed', org);
    const sub = await createGroup(s.admin, 'below', folder);
    const other = await createGroup(s.admin, 'elsewhere');
    const id = await createIdentity(s.admin, org, 'folder-viewer');
    await createBinding(s.admin, folder, id, viewer);
    const token = (await s.arbor.tokens.sign(id, { iss: 'https://test.invalid', sub: id })).token;
    const rest = s.client(token);
    const grpc = s.grpc(token);
    const listed = await grpc.call(GroupsService, 'ListGroups', {});
    if (!listed.ok) return t.fail(JSON.stringify(listed));
    t.deepEqual(listed.json.groups.map((g: any) => g.uid).sort(), [folder, sub].sort());
    same(t, await rest.get('/iam/v2beta1/groups'), listed, 'list');
    same(
      t,
      await rest.get(`/iam/v2beta1/groups/${other}`),
      await grpc.call(GroupsService, 'GetGroup', { uid: other }),
      'other org',
    );
    same(
      t,
      await rest.get(`/iam/v2beta1/groups/${org}`),
      await grpc.call(GroupsService, 'GetGroup', { uid: org }),
      'above',
    );
    same(
      t,
      await rest.post(`/iam/v2beta1/groups/${folder}`, { name: 'nope' }),
      await grpc.call(GroupsService, 'CreateGroup', { parent: folder, group: { name: 'nope' } }),
      'viewer may not write',
    );
    same(
      t,
      await rest.post('/iam/v2beta1/groups', { name: 'org-by-viewer' }),
      await grpc.call(GroupsService, 'CreateGroup', { group: { name: 'org-by-viewer' } }),
      'only the admin makes organizations',
    );
  },
);

test.serial(
  'authorization: an editor writes repos through gRPC exactly as through REST; a viewer is refused alike',
  async (t) => {
    const folder = await createGroup(s.admin, 'edited', org);
    const R = '/registry/v2beta1/repos';
    const as = async (name: string, role: string) => {
      const id = await createIdentity(s.admin, org, name);
      await createBinding(s.admin, folder, id, role);
      const token = (await s.arbor.tokens.sign(id, { iss: 'https://test.invalid', sub: id })).token;
      return { rest: s.client(token), grpc: s.grpc(token) };
    };
    const ed = await as('folder-editor', editor);

    // The editor's creates under its folder succeed through both and make the same repo.
    const viaRest = await ed.rest.post(`${R}/${folder}`, { name: 'by-rest', description: 'd' });
    t.is(viaRest.status, 200, JSON.stringify(viaRest.body));
    const viaGrpc = await ed.grpc.call(ReposService, 'CreateRepo', {
      parent: folder,
      repo: { name: 'by-grpc', description: 'd' },
    });
    if (!viaGrpc.ok) return t.fail(JSON.stringify(viaGrpc));
    const shape = (x: any) => norm(without(x, ['uid', 'name', 'createTime', 'updateTime', 'etag']));
    t.deepEqual(shape(viaGrpc.json), shape(viaRest.body));
    // Each door reads back, as the editor, what the other wrote.
    for (const uid of [viaRest.body.uid, viaGrpc.json.uid]) {
      same(
        t,
        await ed.rest.get(`${R}/${uid}`),
        await ed.grpc.call(ReposService, 'GetRepo', { uid }),
        `get ${uid}`,
      );
    }
    // A masked update of each, through the other door, answers the same.
    const patched = await ed.rest.patch(`${R}/${viaGrpc.json.uid}?updateMask=description`, {
      description: 'changed',
    });
    t.is(patched.status, 200, JSON.stringify(patched.body));
    const updated = await ed.grpc.call(ReposService, 'UpdateRepo', {
      repo: { uid: viaRest.body.uid, description: 'changed' },
      updateMask: 'description',
    });
    if (!updated.ok) return t.fail(JSON.stringify(updated));
    t.is(updated.json.description, 'changed');
    t.deepEqual(shape(updated.json), shape(patched.body));

    // What the editor may not do, both doors refuse alike: a repo above its binding
    const aboveRest = await ed.rest.post(`${R}/${org}`, { name: 'above' });
    // (the organization is out of the editor's sight: hidden as NOT_FOUND, not refused)
    t.is(aboveRest.status, 404, JSON.stringify(aboveRest.body));
    same(
      t,
      aboveRest,
      await ed.grpc.call(ReposService, 'CreateRepo', { parent: org, repo: { name: 'above' } }),
      'editor above its binding',
    );
    // ... and a group, which only an owner makes.
    same(
      t,
      await ed.rest.post(`/iam/v2beta1/groups/${folder}`, { name: 'sub' }),
      await ed.grpc.call(GroupsService, 'CreateGroup', { parent: folder, group: { name: 'sub' } }),
      'an editor makes no groups',
    );
    // A viewer of the same folder is refused the same writes, identically through both.
    const vw = await as('folder-viewer-2', viewer);
    const refused = await vw.rest.post(`${R}/${folder}`, { name: 'by-viewer' });
    t.is(refused.status, 403, JSON.stringify(refused.body));
    same(
      t,
      refused,
      await vw.grpc.call(ReposService, 'CreateRepo', {
        parent: folder,
        repo: { name: 'by-viewer' },
      }),
      'viewer create',
    );
    same(
      t,
      await vw.rest.patch(`${R}/${viaRest.body.uid}?updateMask=description`, { description: 'v' }),
      await vw.grpc.call(ReposService, 'UpdateRepo', {
        repo: { uid: viaRest.body.uid, description: 'v' },
        updateMask: 'description',
      }),
      'viewer update',
    );
    // The folder holds exactly the editor's two repos, whichever door and role asks.
    const listed = await vw.grpc.call(
      ReposService,
      'ListRepos',
      requestOf({ 'uidp.children_of': folder, order_by: 'name' }),
    );
    if (!listed.ok) return t.fail(JSON.stringify(listed));
    t.deepEqual(
      listed.json.repos.map((x: any) => x.name),
      ['by-grpc', 'by-rest'],
    );
    same(t, await ed.rest.get(`${R}?uidp.children_of=${folder}&order_by=name`), listed, 'list');
  },
);

test.serial(
  'authentication: no token, a bad token and a bad scheme are UNAUTHENTICATED alike',
  async (t) => {
    for (const token of [undefined, 'not-a-jwt']) {
      const r = await s.grpc(token).call(GroupsService, 'ListGroups', {});
      t.is(r.code, 16);
      same(t, await s.client(token).get('/iam/v2beta1/groups'), r, `token ${token}`);
    }
  },
);

test.serial('sts: a refused exchange answers the same through both', async (t) => {
  same(
    t,
    await s.client().get('/sts/exchange?aud=x'),
    await s.grpc().call(SecurityTokenService, 'Exchange', { aud: ['x'] }),
    'no token',
  );
  same(
    t,
    await s.client('garbage').get('/sts/exchange?aud=x&identity=y'),
    await s.grpc('garbage').call(SecurityTokenService, 'Exchange', { aud: ['x'], identity: 'y' }),
    'bad token',
  );
});

test.serial(
  'health: grpc.health.v1 answers SERVING without a token, NOT_FOUND for unknown services',
  async (t) => {
    const anon = s.grpc();
    t.deepEqual(await anon.call(Health, 'Check', {}), {
      ok: true,
      code: 0,
      json: { status: 'SERVING' },
    });
    t.deepEqual(await anon.call(Health, 'Check', { service: 'arbor.iam.v2beta1.GroupsService' }), {
      ok: true,
      code: 0,
      json: { status: 'SERVING' },
    });
    t.deepEqual(await anon.call(Health, 'Check', { service: 'liveness' }), {
      ok: true,
      code: 0,
      json: { status: 'SERVING' },
    });
    t.is((await anon.call(Health, 'Check', { service: 'no.such.Service' })).code, 5);
  },
);

test.serial('one port: REST over HTTP/1.1 and gRPC share the listener', async (t) => {
  t.true(s.url.endsWith(s.address));
  t.is((await s.admin.get('/healthz')).status, 200);
  t.true((await s.grpcAdmin.call(GroupsService, 'ListGroups', {})).ok);
});
