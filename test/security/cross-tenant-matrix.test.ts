import test from 'ava';
import { fileURLToPath } from 'node:url';
import { ADMIN } from '../../src/auth/principal.js';
import { createBinding } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';
import {
  buildTenancy,
  CALLERS,
  PLACES,
  type Caller,
  type Place,
  type Tenancy,
} from '../helpers/tenancy-fixtures.js';

/**
 * The cross-tenant matrix: every route family (v2beta1 IAM and registry, vulnerabilities,
 * v1, invite redemption) × every caller, asserting exactly what each sees and may do.
 * Tenants are folders A and B of one organization, beside a sibling organization; each
 * place holds one resource of every kind (see tenancy-fixtures.ts). The test/integration
 * access matrix covers role semantics inside one tenant; this one is about the walls.
 */
let s: TestServer;
let t9: Tenancy;

test.before(async () => {
  s = await startServer();
  t9 = await buildTenancy(s, 'mx');
  // A binding in A of an identity that lives above A: its hydration must not show A's
  // members what they cannot list.
  await createBinding(s.admin, t9.a, t9.res['identity@org']!, t9.builtin['registry.pull']!);
  await s.arbor.services.vulnerabilities.advisoryImport.import(
    ADMIN,
    fileURLToPath(new URL('../fixtures/osv', import.meta.url)),
  );
});
test.after.always(async () => {
  await s?.close();
});

type Role = 'admin' | 'owner' | 'editor' | 'viewer' | 'none';
const ROLE: Record<Exclude<Caller, 'anonymous'>, Role> = {
  admin: 'admin',
  'owner@a': 'owner',
  'editor@a': 'editor',
  'viewer@a': 'viewer',
  'owner@b': 'owner',
  unbound: 'none',
};
/** Where each caller holds its role (and so sees everything at and below). */
const SCOPE: Record<Exclude<Caller, 'anonymous'>, readonly Place[]> = {
  admin: PLACES,
  'owner@a': ['a'],
  'editor@a': ['a'],
  'viewer@a': ['a'],
  'owner@b': ['b'],
  unbound: [],
};
const IDENTIFIED = CALLERS.filter((c): c is Exclude<Caller, 'anonymous'> => c !== 'anonymous');

interface Kind {
  kind: string;
  v2: string;
  plural: string;
  v1?: string;
  /** Which built-in roles may update it (PATCH description). */
  updaters?: readonly Role[];
}
const IAM_WRITERS = ['admin', 'owner'] as const;
const REGISTRY_WRITERS = ['admin', 'owner', 'editor'] as const;
const KINDS: readonly Kind[] = [
  {
    kind: 'group',
    v2: '/iam/v2beta1/groups',
    plural: 'groups',
    v1: '/iam/v1/groups',
    updaters: IAM_WRITERS,
  },
  {
    kind: 'identity',
    v2: '/iam/v2beta1/identities',
    plural: 'identities',
    v1: '/iam/v1/identities',
    updaters: IAM_WRITERS,
  },
  {
    kind: 'role',
    v2: '/iam/v2beta1/roles',
    plural: 'roles',
    v1: '/iam/v1/roles',
    updaters: IAM_WRITERS,
  },
  {
    kind: 'binding',
    v2: '/iam/v2beta1/roleBindings',
    plural: 'roleBindings',
    v1: '/iam/v1/rolebindings',
  },
  {
    kind: 'repo',
    v2: '/registry/v2beta1/repos',
    plural: 'repos',
    v1: '/registry/v1/repos',
    updaters: REGISTRY_WRITERS,
  },
  { kind: 'tag', v2: '/registry/v2beta1/tags', plural: 'tags' },
  {
    kind: 'invite',
    v2: '/iam/v2beta1/groupInvites',
    plural: 'groupInvites',
    v1: '/iam/v1/group_invites',
  },
  {
    kind: 'idp',
    v2: '/iam/v2beta1/identityProviders',
    plural: 'identityProviders',
    v1: '/iam/v1/identityProviders',
    updaters: IAM_WRITERS,
  },
  {
    kind: 'aa',
    v2: '/iam/v2beta1/accountAssociations',
    plural: 'accountAssociations',
    v1: '/iam/v1/account_associations',
    updaters: IAM_WRITERS,
  },
];

const idOf = (item: any): string => item.uid ?? item.id ?? item.group;
const fixtures = (k: Kind) => PLACES.map((p) => t9.res[`${k.kind}@${p}`]!);
const expectedAt = (k: Kind, c: Exclude<Caller, 'anonymous'>) =>
  SCOPE[c].map((p) => t9.res[`${k.kind}@${p}`]!).sort();

test.serial('lists: each caller sees exactly its tenant, and totalCount agrees', async (t) => {
  for (const k of KINDS) {
    for (const c of IDENTIFIED) {
      const res = await t9.callers[c].get(`${k.v2}?page_size=200`);
      t.is(res.status, 200, `${c} ${k.v2}`);
      const items = res.body[k.plural] as any[];
      const seen = items.map(idOf);
      const mine = seen.filter((u) => fixtures(k).includes(u)).sort();
      t.deepEqual(mine, expectedAt(k, c), `${c} lists ${k.kind}`);
      t.is(res.body.totalCount, String(items.length), `${c} ${k.kind} totalCount`);
      // Nothing outside the caller's scope, fixture or not (built-in roles excepted).
      for (const u of seen) {
        if (c === 'admin' || (k.kind === 'role' && !u.includes('/'))) continue;
        t.true(
          SCOPE[c].some((p) => u.startsWith(t9.res[`group@${p}`]!)),
          `${c} must not see ${k.kind} ${u}`,
        );
      }
      if (k.v1) {
        const v1 = await t9.callers[c].get(k.v1);
        t.is(v1.status, 200, `${c} ${k.v1}`);
        const v1mine = (v1.body.items as any[])
          .map(idOf)
          .filter((u) => fixtures(k).includes(u))
          .sort();
        t.deepEqual(v1mine, expectedAt(k, c), `${c} lists v1 ${k.kind}`);
      }
    }
    t.is((await t9.callers.anonymous.get(k.v2)).status, 401, `anonymous ${k.v2}`);
    if (k.v1) t.is((await t9.callers.anonymous.get(k.v1)).status, 401, `anonymous ${k.v1}`);
  }
});

test.serial('lists: filters cannot reach across the wall', async (t) => {
  const ownerA = t9.callers['owner@a'];
  const cases: Array<[string, string]> = [
    [`/iam/v2beta1/groups?name=mx-b`, 'groups'],
    [`/iam/v2beta1/identities?name=b-workload`, 'identities'],
    [`/iam/v2beta1/groups?uidp.descendants_of=${t9.b}`, 'groups'],
    [`/iam/v2beta1/groups?uidp.children_of=${t9.sibling}`, 'groups'],
    [`/registry/v2beta1/tags?uidp.children_of=${encodeURIComponent(t9.res['repo@b']!)}`, 'tags'],
    [`/iam/v2beta1/roleBindings?group=${t9.b}`, 'roleBindings'],
    [
      `/iam/v2beta1/roleBindings?identity=${encodeURIComponent(t9.res['identity@b']!)}`,
      'roleBindings',
    ],
    [`/iam/v2beta1/groupInvites?group=${t9.org}`, 'groupInvites'],
    [`/iam/v2beta1/accountAssociations?group=${t9.sibling}`, 'accountAssociations'],
  ];
  for (const [path, key] of cases) {
    const res = await ownerA.get(path);
    t.is(res.status, 200, path);
    t.deepEqual(res.body[key], [], path);
    t.is(res.body.totalCount, '0', path);
  }
  const own = await ownerA.get(`/iam/v2beta1/groups?uidp.descendants_of=${t9.org}`);
  t.deepEqual(
    (own.body.groups as any[]).map((g) => g.uid),
    [t9.a],
  );
  // v1 selects by id: a hidden id is an empty list, exactly like a missing one.
  const hidden = await ownerA.get(`/iam/v1/groups?id=${t9.b}`);
  const missing = await ownerA.get(`/iam/v1/groups?id=${'e'.repeat(40)}`);
  t.deepEqual(hidden.body, { items: [] });
  t.deepEqual(hidden.body, missing.body);
});

test.serial(
  'gets: 200 inside the tenant, NOT_FOUND outside, alike for hidden and missing',
  async (t) => {
    for (const k of KINDS) {
      for (const place of PLACES) {
        const uid = t9.res[`${k.kind}@${place}`]!;
        for (const c of IDENTIFIED) {
          const want = SCOPE[c].includes(place) ? 200 : 404;
          const res = await t9.callers[c].get(`${k.v2}/${uid}`);
          t.is(res.status, want, `${c} GET ${k.kind}@${place}`);
          if (k.v1) {
            const v1 = await t9.callers[c].get(`${k.v1}/${uid}`);
            t.is(v1.status, want, `${c} GET v1 ${k.kind}@${place}`);
          }
          if (want === 404) {
            const missingUid =
              k.kind === 'aa' || k.kind === 'group'
                ? `${uid.slice(0, -1)}${uid.endsWith('0') ? '1' : '0'}`
                : `${uid.slice(0, uid.lastIndexOf('/'))}/${'0'.repeat(16)}`;
            const missing = await t9.callers[c].get(`${k.v2}/${missingUid}`);
            t.is(missing.status, 404);
            t.is(missing.body.code, res.body.code);
            t.deepEqual(
              Object.keys(missing.body).sort(),
              Object.keys(res.body).sort(),
              `${c} ${k.kind}`,
            );
          }
        }
        t.is((await t9.callers.anonymous.get(`${k.v2}/${uid}`)).status, 401);
      }
    }
  },
);

test.serial('hydrated bindings: names of what the caller cannot list never show', async (t) => {
  for (const c of IDENTIFIED) {
    const res = await t9.callers[c].get('/iam/v2beta1/roleBindings?page_size=200');
    for (const b of res.body.roleBindings as any[]) {
      const visible = (uid: string) =>
        c === 'admin' || SCOPE[c].some((p) => uid.startsWith(t9.res[`group@${p}`]!));
      if (!visible(b.identity.uid)) t.is(b.identity.name, '', `${c} ${b.uid}`);
      if (!visible(b.group.uid)) t.is(b.group.name, '', `${c} ${b.uid}`);
      t.true(visible(b.uid), `${c} lists binding ${b.uid}`);
    }
    const v1 = await t9.callers[c].get('/iam/v1/rolebindings');
    for (const b of v1.body.items as any[]) {
      if (c !== 'admin' && !SCOPE[c].some((p) => b.identity.startsWith(t9.res[`group@${p}`]!)))
        t.is(b.claimMatchSubject, '', `${c} v1 ${b.id}`);
    }
  }
});

test.serial(
  'updates: the tenant’s writers may, its readers are denied, others see nothing',
  async (t) => {
    for (const k of KINDS.filter((x) => x.updaters)) {
      for (const place of PLACES) {
        const uid = t9.res[`${k.kind}@${place}`]!;
        for (const c of CALLERS) {
          const res = await t9.callers[c].patch(`${k.v2}/${uid}?updateMask=description`, {
            description: `by ${c}`,
          });
          let want: number;
          if (c === 'anonymous') want = 401;
          else if (c === 'admin') want = 200;
          else if (!SCOPE[c].includes(place)) want = 404;
          else want = k.updaters!.includes(ROLE[c]) ? 200 : 403;
          t.is(res.status, want, `${c} PATCH ${k.kind}@${place}`);
        }
      }
    }
  },
);

test.serial('creates: at each place, by each caller', async (t) => {
  let n = 0;
  const bodies: Array<[string, (g: string) => [string, unknown], readonly Role[]]> = [
    ['group', (g) => [`/iam/v2beta1/groups/${g}`, { name: `c${n}` }], IAM_WRITERS],
    [
      'identity',
      (g) => [
        `/iam/v2beta1/identities/${g}`,
        { name: `c${n}`, claimMatch: { issuer: 'https://i.example.com', subject: `c${n}` } },
      ],
      IAM_WRITERS,
    ],
    [
      'role',
      (g) => [`/iam/v2beta1/roles/${g}`, { name: `c${n}`, capabilities: ['repo.list'] }],
      IAM_WRITERS,
    ],
    ['repo', (g) => [`/registry/v2beta1/repos/${g}`, { name: `c${n}` }], REGISTRY_WRITERS],
    [
      'invite',
      (g) => [`/iam/v2beta1/groupInvites/${g}`, { roleUid: t9.builtin.viewer, ttl: '60s' }],
      IAM_WRITERS,
    ],
    [
      'binding',
      (g) => [
        `/iam/v2beta1/roleBindings/${g}`,
        { identityUid: t9.res[`identity@${placeOf(g)}`], roleUid: t9.builtin['registry.pull'] },
      ],
      IAM_WRITERS,
    ],
  ];
  const placeOf = (g: string) => PLACES.find((p) => t9.res[`group@${p}`] === g)!;
  for (const [kind, make, writers] of bodies) {
    for (const place of PLACES) {
      for (const c of CALLERS) {
        n++;
        const [path, body] = make(t9.res[`group@${place}`]!);
        const res = await t9.callers[c].post(path, body);
        let want: number;
        if (c === 'anonymous') want = 401;
        else if (c === 'admin') want = kind === 'binding' ? 200 : 200;
        else if (!SCOPE[c].includes(place)) want = 404;
        else want = writers.includes(ROLE[c]) ? 200 : 403;
        // A binding is unique per (group, identity, role): the second allowed one conflicts.
        if (kind === 'binding' && want === 200 && c !== 'admin') want = 409;
        t.is(res.status, want, `${c} creates ${kind}@${place}: ${JSON.stringify(res.body)}`);
      }
    }
  }
  // Tags: a new tag needs tag.create at the repo (editor and owner hold it).
  for (const place of PLACES) {
    for (const c of CALLERS) {
      n++;
      const res = await t9.callers[c].post(`/registry/v2beta1/tags/${t9.res[`repo@${place}`]}`, {
        name: `t${n}`,
        digest: `sha256:${'d'.repeat(64)}`,
      });
      let want: number;
      if (c === 'anonymous') want = 401;
      else if (c === 'admin') want = 200;
      else if (!SCOPE[c].includes(place)) want = 404;
      else want = REGISTRY_WRITERS.includes(ROLE[c] as 'owner') ? 200 : 403;
      t.is(res.status, want, `${c} pushes a tag to repo@${place}`);
    }
  }
});

test.serial('deletes: denied or hidden for everyone but the tenant’s owner', async (t) => {
  for (const kind of ['binding', 'invite', 'idp', 'tag', 'identity']) {
    const k = KINDS.find((x) => x.kind === kind)!;
    for (const place of PLACES) {
      const uid = t9.res[`${kind}@${place}`]!;
      for (const c of CALLERS) {
        if (
          c === 'admin' ||
          (ROLE[c as 'owner@a'] === 'owner' && SCOPE[c as 'owner@a'].includes(place))
        )
          continue;
        const res = await t9.callers[c].delete(`${k.v2}/${uid}`);
        let want: number;
        if (c === 'anonymous') want = 401;
        else if (!SCOPE[c].includes(place)) want = 404;
        else if (kind === 'tag' && ROLE[c] === 'editor') want = 200;
        else want = 403;
        if (want === 200) continue; // would remove the fixture; covered by the tag suite
        t.is(res.status, want, `${c} DELETE ${kind}@${place}`);
      }
    }
  }
  // The owner of A deletes in A only.
  const ownerA = t9.callers['owner@a'];
  t.is((await ownerA.delete(`/iam/v2beta1/groupInvites/${t9.res['invite@b']}`)).status, 404);
  t.is((await ownerA.delete(`/iam/v2beta1/groupInvites/${t9.res['invite@a']}`)).status, 200);
});

test.serial('vulnerabilities: advisories are visible to members of any group only', async (t) => {
  for (const c of IDENTIFIED) {
    const res = await t9.callers[c].get('/vulnerabilities/v2beta1/advisories?page_size=200');
    t.is(res.status, 200, c);
    const n = Number(res.body.totalCount);
    if (c === 'unbound') t.is(n, 0, c);
    else t.true(n > 0, c);
    t.is(res.body.advisories.length, n, c);
  }
  t.is((await t9.callers.anonymous.get('/vulnerabilities/v2beta1/advisories')).status, 401);
});

test.serial('invites: the code is the credential, and only inside its organization', async (t) => {
  const redeem = '/iam/v2beta1/groupInvites:redeem';
  t.is((await t9.callers.anonymous.post(redeem, { code: t9.inviteCode.b })).status, 401);
  // The admin is no identity.
  t.is((await s.admin.post(redeem, { code: t9.inviteCode.b })).status, 400);
  // An org identity cannot join the sibling organization, even holding its code.
  const cross = await t9.callers.unbound.post(redeem, { code: t9.inviteCode.sibling });
  t.is(cross.status, 400);
  // A forged code answers like an unknown one.
  const forged = `${t9.inviteCode.b!.slice(0, -4)}AAAA`;
  t.is((await t9.callers.unbound.post(redeem, { code: forged })).status, 404);
  // The unbound identity joins B with its code, then sees B and nothing else.
  const joined = await t9.callers.unbound.post(redeem, { code: t9.inviteCode.b });
  t.is(joined.status, 200, JSON.stringify(joined.body));
  const groups = await t9.callers.unbound.get('/iam/v2beta1/groups');
  const uids = (groups.body.groups as any[]).map((g) => g.uid as string);
  t.true(uids.includes(t9.b));
  t.true(
    uids.every((u) => u.startsWith(t9.b)),
    uids.join(),
  );
});
