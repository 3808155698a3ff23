/* eslint-disable max-lines -- one table of kinds, one suite over them */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { DescService } from '@bufbuild/protobuf';
import test, { type ExecutionContext } from 'ava';
import { examplesFor } from '../../src/api/openapi/examples.js';
import { ADMIN } from '../../src/auth/principal.js';
import { ALL_API_SERVICES, KINDS } from '../../src/features.js';
import type { AnyKind } from '../../src/wire/kinds.js';
import { REPO_KIND } from '../../src/wire/registry-wire.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, ISSUER } from '../helpers/iam-fixtures.js';
import {
  startGrpcServer,
  type GrpcCaller,
  type GrpcReply,
  type GrpcTestServer,
} from '../helpers/grpc-server.js';
import type { Client, Reply } from '../helpers/server.js';

/**
 * One write contract for every kind, generated from the kind registry (wire/kinds.ts), not
 * from a list kept here: for each kind, Get, Update and Delete of a missing uid, of an
 * invisible resource (one in another organization, or one a caller bound nowhere cannot
 * see) and of a present one, on the REST door and, where the kind has a gRPC service, on
 * the gRPC door. Missing and invisible are NOT_FOUND on every verb and leave the resource
 * as it was; a present resource is deleted once (200, one audit record), and deleting it
 * again is NOT_FOUND (no `allow_missing` exists on any kind). A kind added to the registry
 * is covered the day it is added; one without a fixture below fails loudly.
 */
let s: GrpcTestServer;
let w: World;

type Place = 'a' | 'b';

interface World {
  /** A folder in each of two organizations. */
  folder: Record<Place, string>;
  viewer: string;
  editor: string;
  /** A fresh name for each fixture (names are unique in their group). */
  name(prefix: string): string;
  /** An identity's API token, signed by the server's own issuer. */
  tokenFor(identityUid: string): Promise<string>;
}

/** A Create to send: under which parent, with which body, as whom (the admin by default). */
interface Made {
  parent: string;
  body: Record<string, unknown>;
  as?: Client;
}

interface Fixture {
  /** The Create of one new resource at (or below) the folder of `place`. */
  create?(place: Place): Made | Promise<Made>;
  /** For a kind no client creates (advisories are imported): one that exists. */
  existing?(): Promise<string>;
  /**
   * Set when the kind hangs under no group, with the reason: there is no other tenant to
   * hide one in, so invisibility is checked with the caller bound nowhere only.
   */
  tenantless?: string;
}

/**
 * How to make one resource of each kind, keyed by the descriptor's `name`. The test reads
 * the kinds from the registry; this table only says how to create one.
 */
const FIXTURES: Record<string, Fixture> = {
  Group: { create: (at) => ({ parent: w.folder[at], body: { name: w.name('g') } }) },
  Identity: {
    create: (at) => ({
      parent: w.folder[at],
      body: { name: w.name('i'), claimMatch: { issuer: ISSUER, subject: w.name('sub') } },
    }),
  },
  Role: {
    create: (at) => ({
      parent: w.folder[at],
      body: { name: w.name('r'), capabilities: ['groups.list'] },
    }),
  },
  RoleBinding: {
    // A fresh identity each time: a binding is unique per (group, identity, role).
    create: async (at) => ({
      parent: w.folder[at],
      body: {
        identityUid: await createIdentity(s.admin, w.folder[at], w.name('bi')),
        roleUid: w.viewer,
      },
    }),
  },
  IdentityProvider: {
    create: (at) => ({
      parent: w.folder[at],
      body: {
        name: w.name('idp'),
        defaultRole: w.viewer,
        oidc: { issuer: 'https://accounts.example.com', clientId: 'c', clientSecret: SECRET },
      },
    }),
  },
  AccountAssociation: {
    // One association per group, which is its uid.
    create: async (at) => ({
      parent: await createGroup(s.admin, w.name('aa'), w.folder[at]),
      body: { name: w.name('aa'), amazon: { account: '123456789012' } },
    }),
  },
  GroupInvite: {
    create: (at) => ({ parent: w.folder[at], body: { roleUid: w.viewer, ttl: '3600s' } }),
  },
  Repo: { create: (at) => ({ parent: w.folder[at], body: { name: w.name('repo') } }) },
  Tag: {
    create: async (at) => ({
      parent: await create(REPO_KIND, 'Repo', at),
      body: { name: 'latest', digest: `sha256:${'a'.repeat(64)}` },
    }),
  },
  Advisory: {
    tenantless: 'advisories are global data under no group',
    existing: async () => {
      const res = await s.admin.get('/vulnerabilities/v2beta1/advisories?page_size=1');
      return uidOf({ ...res, body: res.body.advisories?.[0] });
    },
  },
  Subscription: {
    create: (at) => ({
      parent: w.folder[at],
      body: { name: w.name('sub'), sink: 'https://siem.example.com/arbor' },
    }),
  },
  AccessReview: {
    // A group of its own each time: a group holds at most three open reviews.
    create: async (at) => ({
      parent: await createGroup(s.admin, w.name('ar'), w.folder[at]),
      body: {
        dueTime: new Date(Date.now() + 7 * 86_400_000).toISOString(),
        defaultDecision: 'keep',
      },
    }),
  },
  AccessRequest: {
    // Asked by an identity of its own, which may list the folder: the requester is always
    // the caller.
    create: async (at) => {
      const requester = await createIdentity(s.admin, w.folder[at], w.name('req'));
      await createBinding(s.admin, w.folder[at], requester, w.viewer);
      return {
        parent: w.folder[at],
        body: { roleUid: w.editor, durationSeconds: 3600, reason: 'the kind contract' },
        as: s.client(await w.tokenFor(requester)),
      };
    },
  },
};

/** One new resource of kind `k` at `place` (through its REST Create), with `extra` in the body. */
async function create(
  k: AnyKind,
  name: string,
  place: Place,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const fixture = FIXTURES[name]!;
  if (!fixture.create) return fixture.existing!();
  const m = await fixture.create(place);
  return uidOf(await (m.as ?? s.admin).post(`${k.path}/${m.parent}`, { ...m.body, ...extra }));
}

const SECRET = 'kind-contract-client-secret-0123456789';

/** The uid of a create's answer; anything but 200 fails the test loudly. */
function uidOf(res: Pick<Reply, 'status' | 'body'>): string {
  const uid = (res.body as { uid?: unknown } | undefined)?.uid;
  if (res.status !== 200 || typeof uid !== 'string')
    throw new Error(`fixture: ${res.status} ${JSON.stringify(res.body)}`);
  return uid;
}

/** Another uid in the same place: the same path with a different last 16 hex characters. */
function missingLike(uid: string): string {
  let tail = uid.slice(-16);
  while (tail === uid.slice(-16)) tail = randomBytes(8).toString('hex');
  return uid.slice(0, -16) + tail;
}

interface Callers {
  /** The admin token. */
  admin: Door;
  /** The owner of organization a, which holds every write of the kinds there. */
  ownerA: Door;
  /** An identity of organization a bound nowhere. */
  unbound: Door;
}

interface Door {
  rest: Client;
  grpc: GrpcCaller;
}

let callers: Callers;

test.before(async () => {
  s = await startGrpcServer();
  const orgA = await createGroup(s.admin, 'contract-a');
  const orgB = await createGroup(s.admin, 'contract-b');
  const roles = (await s.admin.get('/iam/v2beta1/roles?page_size=200')).body.roles as Array<{
    uid: string;
    name: string;
  }>;
  const builtin = (name: string) => roles.find((r) => r.name === name)!.uid;
  let n = 0;
  w = {
    folder: {
      a: await createGroup(s.admin, 'folder', orgA),
      b: await createGroup(s.admin, 'folder', orgB),
    },
    viewer: builtin('viewer'),
    editor: builtin('editor'),
    name: (prefix) => `${prefix}-${++n}`,
    tokenFor: async (uid) =>
      (await s.arbor.tokens.sign(uid, { iss: 'https://test.invalid', sub: uid })).token,
  };
  const door = async (identity: string): Promise<Door> => {
    const token = await w.tokenFor(identity);
    return { rest: s.client(token), grpc: s.grpc(token) };
  };
  const owner = await createIdentity(s.admin, orgA, 'owner-a');
  await createBinding(s.admin, orgA, owner, builtin('owner'));
  callers = {
    admin: { rest: s.admin, grpc: s.grpcAdmin },
    ownerA: await door(owner),
    unbound: await door(await createIdentity(s.admin, orgA, 'unbound')),
  };
  await s.arbor.services.vulnerabilities.advisoryImport.import(
    ADMIN,
    fileURLToPath(new URL('../fixtures/osv', import.meta.url)),
  );
});
test.after.always(async () => {
  await s?.close();
});

/** What a kind offers on each door, read from what the server mounted. */
interface Surface {
  rest: { get: boolean; create: boolean; update: boolean; delete: boolean };
  /** The properties of the kind's resource in the document. */
  fields: string[];
  grpc?: { service: DescService; update: boolean; delete: boolean };
}

async function surfaceOf(k: AnyKind): Promise<Surface> {
  const doc = (await s.admin.get('/openapi.json')).body as {
    paths: Record<string, Record<string, unknown>>;
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
  };
  const one = doc.paths[`${k.path}/{uid}`] ?? {};
  const service = ALL_API_SERVICES.find((x) => x.methods.some((m) => m.name === `Get${k.name}`));
  const has = (name: string) => service?.methods.some((m) => m.name === name) ?? false;
  return {
    rest: {
      get: 'get' in one,
      create: 'post' in one,
      update: 'patch' in one,
      delete: 'delete' in one,
    },
    fields: Object.keys(doc.components.schemas[k.name]?.properties ?? {}),
    ...(service
      ? { grpc: { service, update: has(`Update${k.name}`), delete: has(`Delete${k.name}`) } }
      : {}),
  };
}

/** The kind's own update example (the document's), as REST and gRPC send it. */
function updateOf(k: AnyKind): { body: Record<string, unknown>; mask: string } {
  const ex = examplesFor(k.path);
  return { body: (ex.update ?? {}) as Record<string, unknown>, mask: ex.updateMask ?? '' };
}

type Verb = 'get' | 'update' | 'delete';

async function restCall(k: AnyKind, c: Client, verb: Verb, uid: string): Promise<Reply> {
  const at = `${k.path}/${uid}`;
  if (verb === 'get') return c.get(at);
  if (verb === 'delete') return c.delete(at);
  const { body, mask } = updateOf(k);
  return c.patch(mask ? `${at}?updateMask=${mask}` : at, body);
}

async function grpcCall(
  k: AnyKind,
  g: GrpcCaller,
  service: DescService,
  verb: Verb,
  uid: string,
): Promise<GrpcReply> {
  if (verb === 'get') return g.call(service, `Get${k.name}`, { uid });
  if (verb === 'delete') return g.call(service, `Delete${k.name}`, { uid });
  const m = service.methods.find((x) => x.name === `Update${k.name}`)!;
  const get = service.methods.find((x) => x.name === `Get${k.name}`)!;
  const field = m.input.fields.find((f) => f.message?.typeName === get.output.typeName)!;
  const { body, mask } = updateOf(k);
  return g.call(service, m.name, {
    [field.jsonName]: { ...body, uid },
    ...(mask ? { updateMask: mask } : {}),
  });
}

/** The verbs of `surface` on each door, each asserted NOT_FOUND for `uid`. */
async function notFoundEverywhere(
  t: ExecutionContext,
  k: AnyKind,
  sf: Surface,
  who: Door,
  uid: string,
  what: string,
): Promise<void> {
  for (const verb of ['get', 'update', 'delete'] as const) {
    if (sf.rest[verb]) {
      const res = await restCall(k, who.rest, verb, uid);
      t.is(res.status, 404, `REST ${verb} ${what}: ${JSON.stringify(res.body)}`);
      t.is(res.body?.code, 5, `REST ${verb} ${what}`);
    }
    if (sf.grpc && (verb === 'get' || sf.grpc[verb])) {
      const res = await grpcCall(k, who.grpc, sf.grpc.service, verb, uid);
      t.is(res.code, 5, `gRPC ${verb} ${what}: ${res.ok ? 'OK' : res.message}`);
    }
  }
}

/** A present resource through one door: read, updated, deleted once, then gone. */
async function presentThroughRest(t: ExecutionContext, k: AnyKind, sf: Surface, uid: string) {
  const c = callers.ownerA.rest;
  const got = await restCall(k, c, 'get', uid);
  t.is(got.status, 200, `REST get present: ${JSON.stringify(got.body)}`);
  t.is(got.body?.uid, uid);
  if (sf.rest.update) {
    const res = await restCall(k, c, 'update', uid);
    t.is(res.status, 200, `REST update present: ${JSON.stringify(res.body)}`);
  }
  if (!sf.rest.delete) return;
  const del = await restCall(k, c, 'delete', uid);
  t.is(del.status, 200, `REST delete present: ${JSON.stringify(del.body)}`);
  t.deepEqual(del.body, {});
  await goneAfterDelete(t, k, sf, uid, 'REST');
}

async function presentThroughGrpc(t: ExecutionContext, k: AnyKind, sf: Surface, uid: string) {
  const g = callers.ownerA.grpc;
  const service = sf.grpc!.service;
  const got = await grpcCall(k, g, service, 'get', uid);
  t.is(got.ok && got.json.uid, uid, `gRPC get present: ${got.ok ? '' : got.message}`);
  if (sf.grpc!.update) {
    const res = await grpcCall(k, g, service, 'update', uid);
    t.true(res.ok, `gRPC update present: ${res.ok ? '' : res.message}`);
  }
  if (!sf.grpc!.delete) return;
  const del = await grpcCall(k, g, service, 'delete', uid);
  t.true(del.ok, `gRPC delete present: ${del.ok ? '' : del.message}`);
  await goneAfterDelete(t, k, sf, uid, 'gRPC');
}

/** Deleted once: every verb is NOT_FOUND now, and the trail holds exactly one delete. */
async function goneAfterDelete(
  t: ExecutionContext,
  k: AnyKind,
  sf: Surface,
  uid: string,
  door: string,
) {
  await notFoundEverywhere(t, k, sf, callers.ownerA, uid, `after a ${door} delete`);
  await notFoundEverywhere(t, k, sf, callers.admin, uid, `after a ${door} delete (admin)`);
  const q = `resource_uid=${encodeURIComponent(uid)}&operation=delete`;
  const trail = await s.admin.get(`/audit/v2beta1/events?${q}`);
  t.is(trail.body?.totalCount, '1', `one audit record of the ${door} delete`);
}

/** The resource is still there, as it was: nothing a refused call did reached it. */
async function stillThere(t: ExecutionContext, k: AnyKind, uid: string, what: string) {
  const res = await s.admin.get(`${k.path}/${uid}`);
  t.is(res.status, 200, `${what}: still there`);
  const q = `resource_uid=${encodeURIComponent(uid)}`;
  const trail = await s.admin.get(`/audit/v2beta1/events?${q}&operation=delete`);
  t.is(trail.body?.totalCount, '0', `${what}: no delete recorded`);
}

test('the registry has kinds, each with a v2 path and a name', (t) => {
  t.true(KINDS.length >= 12);
  for (const k of KINDS) t.regex(k.path, /^\/[a-z]+\/v2beta1\/[a-zA-Z]+$/, k.name);
});

for (const k of KINDS) {
  test.serial(
    `${k.name}: missing and invisible are NOT_FOUND on every verb and door; present is read, updated and deleted once`,
    async (t) => {
      const fixture = FIXTURES[k.name];
      if (!fixture) {
        t.fail(
          `no fixture for the kind ${k.name}: add one to FIXTURES in kind-contract.test.ts, ` +
            'so that the write contract covers it',
        );
        return;
      }
      const sf = await surfaceOf(k);
      t.true(sf.rest.get, `${k.name} has a REST Get`);

      // Missing: a uid beside a real one, for the admin and for the organization's owner.
      const make = (at: Place) => create(k, k.name, at);
      const keepA = await make('a');
      for (const [name, who] of [
        ['admin', callers.admin],
        ['owner', callers.ownerA],
      ] as const)
        await notFoundEverywhere(t, k, sf, who, missingLike(keepA), `missing (${name})`);

      // Invisible: it exists, and this caller may not see it.
      await notFoundEverywhere(t, k, sf, callers.unbound, keepA, 'invisible to the unbound');
      await stillThere(t, k, keepA, 'after the unbound caller');
      if (fixture.tenantless === undefined) {
        const keepB = await make('b');
        await notFoundEverywhere(t, k, sf, callers.ownerA, keepB, 'in another organization');
        await stillThere(t, k, keepB, 'after the other organization’s owner');
      }

      // Present: through REST, then through gRPC (each deletes its own).
      await presentThroughRest(t, k, sf, fixture.tenantless ? keepA : await make('a'));
      if (sf.grpc) await presentThroughGrpc(t, k, sf, fixture.tenantless ? keepA : await make('a'));
    },
  );
}

/** A value for a server-owned field unlike the one the server gave (`was`), of its type. */
function forged(was: unknown): unknown {
  if (typeof was === 'boolean') return !was;
  if (typeof was === 'number') return was + 7;
  if (Array.isArray(was)) return was.length === 0 ? ['forged'] : [];
  if (typeof was === 'string') {
    if (/^[0-9a-f]{40}(\/[0-9a-f]{16})*$/.test(was)) return missingLike(was);
    if (!Number.isNaN(Date.parse(was))) return '2001-02-03T04:05:06.000Z';
    return `${was}-forged`;
  }
  return { forged: true };
}

for (const k of KINDS) {
  test.serial(
    `${k.name}: server-owned fields in a Create or Update body are accepted and ignored`,
    async (t) => {
      const fixture = FIXTURES[k.name];
      if (!fixture) {
        t.fail(`no fixture for the kind ${k.name}: add one to FIXTURES in kind-contract.test.ts`);
        return;
      }
      const sf = await surfaceOf(k);
      // The descriptor's list names fields the resource has.
      for (const f of k.outputOnly) t.true(sf.fields.includes(f), `${k.name}.${f} is a field`);
      if (!sf.rest.create && !sf.rest.update && !sf.grpc?.update) {
        t.deepEqual(k.outputOnly, [], `${k.name} takes no body, so it lists no server-owned field`);
        return;
      }
      const sample = (await s.admin.get(`${k.path}/${await create(k, k.name, 'a')}`)).body;
      const forgery = Object.fromEntries(k.outputOnly.map((f) => [f, forged(sample[f])]));
      if (sf.rest.create && fixture.create) {
        const uid = await create(k, k.name, 'a', forgery);
        const made = (await s.admin.get(`${k.path}/${uid}`)).body;
        for (const f of k.outputOnly)
          t.notDeepEqual(made[f], forgery[f], `Create took ${k.name}.${f} from the body`);
      }
      if (sf.rest.update) {
        const { body, mask } = updateOf(k);
        const at = `${k.path}/${sample.uid}`;
        const res = await s.admin.patch(mask ? `${at}?updateMask=${mask}` : at, {
          ...body,
          ...forgery,
        });
        t.is(res.status, 200, `REST update with server-owned fields: ${JSON.stringify(res.body)}`);
        for (const f of k.outputOnly)
          t.notDeepEqual(res.body[f], forgery[f], `Update took ${k.name}.${f} from the body`);
        t.is(res.body.uid, sample.uid);
        t.is(res.body.createTime, sample.createTime);
      }
      if (sf.grpc?.update) {
        // A gRPC client echoes the message it read, every output-only field set.
        const service = sf.grpc.service;
        const got = await grpcCall(k, s.grpcAdmin, service, 'get', sample.uid);
        const m = service.methods.find((x) => x.name === `Update${k.name}`)!;
        const field = m.input.fields.find((f) => f.message?.typeName === m.output.typeName)!;
        const { body, mask } = updateOf(k);
        const res = await s.grpcAdmin.call(service, m.name, {
          [field.jsonName]: { ...(got.ok ? got.json : {}), ...body },
          ...(mask ? { updateMask: mask } : {}),
        });
        t.true(res.ok, `gRPC update echoing the resource: ${res.ok ? '' : res.message}`);
        if (res.ok) t.is(res.json.createTime, got.ok ? got.json.createTime : undefined);
      }
    },
  );
}
