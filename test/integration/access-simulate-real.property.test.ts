import test from 'ava';
import fc from 'fast-check';
import { CAPABILITIES, type Capability } from '../../src/auth/capabilities.js';
import { ADMIN, type Principal } from '../../src/auth/principal.js';
import { isRpcError } from '../../src/core/rpc-error.js';
import type { SimulateAnswer } from '../../src/resources/access/simulate.js';
import type { ModelWorld } from '../helpers/access-model.js';
import { asIdentity } from '../helpers/iam-fixtures.js';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { changeArbOf, pick, removalOf, type RemovalShape } from '../helpers/change-shapes.js';
import { buildWorld, worldArb } from '../helpers/model-world.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { flatDeltas } from '../helpers/simulate-flat.js';
import type { ModelChange } from '../helpers/simulate-model.js';

/**
 * What access:simulate predicts is what happens. On random worlds of several organizations
 * (custom roles defined below the root too, bindings of every window) a random caller
 * simulates a random change set, then makes the changes FOR REAL through the services, one
 * by one: each change's `applied && permitted` must say whether the real call succeeded.
 * The set stops at the first refused change (the simulation went on as if it had been
 * made) or at the first that changed the caller's own access (a verdict is judged on the
 * caller's access before the set). When every change was made, the admin's simulated
 * delta must be exactly what the real authorizer then answers differently, for every
 * identity, capability and group. A fixed seed; ARBOR_SIM_REAL_RUNS for more.
 */
const RUNS = Number(process.env.ARBOR_SIM_REAL_RUNS ?? 24);
const SEED = Number(process.env.ARBOR_SIM_SEED ?? 20261129);

const POOL: Capability[] = [
  'groups.list',
  'groups.delete',
  'identity.list',
  'identity.delete',
  'role_bindings.list',
  'role_bindings.create',
  'role_bindings.delete',
  'roles.list',
  'roles.update',
  'repo.list',
];

let s: TestServer;
test.before(async () => {
  s = await startServer();
});
test.after.always(async () => {
  await s?.close();
});

type ChangeShape =
  | {
      kind: 'create';
      group: number;
      identity: number;
      role: number;
      window: Win;
      /** Bind again where a binding is: its identity at its group (referable to its binder). */
      again: boolean;
    }
  | RemovalShape;
type Win = 'none' | 'expired' | 'expiring' | 'scheduled';

const changeArb: fc.Arbitrary<ChangeShape> = changeArbOf(
  fc.record({
    kind: fc.constant('create' as const),
    group: fc.nat(),
    identity: fc.nat(),
    role: fc.nat(),
    window: fc.constantFrom<Win>('none', 'none', 'expired', 'expiring', 'scheduled'),
    again: fc.boolean(),
  }),
  POOL,
  { deleteIdentity: 2 },
);

const HOUR = 3_600_000;

/** `near`: where the caller was bound (its binds `again` are drawn from bindings there). */
function changeOf(w: ModelWorld, c: ChangeShape, near?: string): ModelChange {
  switch (c.kind) {
    case 'create': {
      const now = Date.now();
      const win = {
        none: {},
        expired: { expireTime: new Date(now - HOUR).toISOString() },
        expiring: { expireTime: new Date(now + HOUR).toISOString() },
        scheduled: { notBefore: new Date(now + HOUR).toISOString() },
      }[c.window];
      const there = w.bindings.filter((b) => near === undefined || covers(near, b.group));
      const bound = c.again && there.length > 0 ? pick(there, c.identity) : undefined;
      return {
        createRoleBinding: {
          groupUid: bound?.group ?? pick(w.groups, c.group),
          identityUid: bound?.identity ?? pick(w.identities, c.identity),
          roleUid: pick([...w.roles.keys()], c.role),
          ...win,
        },
      };
    }
    default:
      return removalOf(w, c);
  }
}

/** A fresh principal each time: grants are remembered per principal object. */
const principalOf = (c: string): Principal => (c === 'admin' ? ADMIN : asIdentity(c));

const below = (anc: string, uid: string) => uid.startsWith(`${anc}/`);
const covers = (anc: string, uid: string) => uid === anc || below(anc, uid);

async function succeeds(call: () => Promise<unknown>): Promise<boolean> {
  try {
    await call();
    return true;
  } catch (e) {
    if (isRpcError(e)) return false;
    throw e;
  }
}

/**
 * Make change `c` for real as `caller`. A group delete is the cascade a client makes (the
 * server deletes only an empty group): every binding at or below it, every identity
 * below it, every role defined at or below it, the groups below deepest first, then it.
 */
async function makeReal(caller: string, c: ModelChange): Promise<boolean> {
  const sv = s.arbor.services;
  const p = () => principalOf(caller);
  if ('createRoleBinding' in c) {
    const { groupUid, ...body } = c.createRoleBinding;
    return succeeds(() => sv.roleBindings.create(p(), groupUid, body));
  }
  if ('deleteRoleBinding' in c)
    return succeeds(() => sv.roleBindings.delete(p(), c.deleteRoleBinding.uid));
  if ('updateRole' in c)
    return succeeds(() =>
      sv.roles.update(p(), c.updateRole.uid, { capabilities: c.updateRole.capabilities }, [
        'capabilities',
      ]),
    );
  if ('deleteIdentity' in c) return succeeds(() => sv.identities.delete(p(), c.deleteIdentity.uid));
  const g = c.deleteGroup.uid;
  const k = s.db.knex;
  const uids = async (table: string, column = 'uid') =>
    ((await k(table).select('uid', column)) as Record<string, string>[])
      .filter((r) => covers(g, r[column]!))
      .map((r) => r.uid!);
  // What is there, as it is there: the cascade only deletes, as the caller.
  if (!(await k('groups').where({ uid: g }).first()))
    return succeeds(() => sv.groups.delete(p(), g));
  for (const b of await uids('role_bindings', 'parent_uid'))
    if (!(await succeeds(() => sv.roleBindings.delete(p(), b)))) return false;
  for (const i of (await uids('identities')).filter((u) => u !== g))
    if (!(await succeeds(() => sv.identities.delete(p(), i)))) return false;
  for (const r of (await uids('roles')).filter((u) => u !== g))
    if (!(await succeeds(() => sv.roles.delete(p(), r)))) return false;
  const groups = (await uids('groups')).sort((a, b) => b.length - a.length);
  for (const x of groups) if (!(await succeeds(() => sv.groups.delete(p(), x)))) return false;
  return true;
}

/** Every (identity, capability, group) the real authorizer grants now, over the world. */
async function access(w: ModelWorld, ids: readonly string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const id of ids) {
    const p = asIdentity(id);
    for (const cap of CAPABILITIES)
      for (const g of w.groups)
        if (await s.arbor.authz.can(p, cap, g)) out.add(`${id} ${cap} ${g}`);
  }
  return out;
}

/** Every page of one simulation. */
async function simulateAll(p: Principal, changes: ModelChange[]): Promise<SimulateAnswer[]> {
  const pages: SimulateAnswer[] = [];
  let token: string | undefined;
  do {
    const body = { changes, pageSize: 200, ...(token ? { pageToken: token } : {}) };
    const page = await s.arbor.services.accessSimulator.simulate(p, body);
    pages.push(page);
    token = page.nextPageToken;
  } while (token);
  return pages;
}

/** The flips the admin's simulated delta predicts, over the world's groups. */
function predicted(w: ModelWorld, pages: readonly SimulateAnswer[]): Set<string> {
  const out = new Set<string>();
  for (const d of flatDeltas(pages))
    for (const g of w.groups)
      if (covers(d.group.uid, g) && !d.unchangedBelow.some((u) => covers(u, g)))
        out.add(`${d.identity.uid} ${d.capability} ${g}`);
  return out;
}

interface Stats {
  made: number;
  byIdentities: number;
  refused: number;
  deltas: number;
  /** Binds made of an identity the caller may not list (referable by a binding it sees). */
  referred: number;
  refusals: Map<string, number>;
}

/**
 * The caller: the admin a third of the time, else an identity that the admin first binds
 * at its organization's root to a role from there (a custom one, or owner or editor), or
 * as owner of a folder below the root, so that its changes are often made and sometimes
 * refused for what it lacks.
 */
async function callerOf(
  w: ModelWorld,
  callerNo: number,
  roleNo: number,
): Promise<{ caller: string; near?: string }> {
  if (callerNo % 3 === 0) return { caller: 'admin' };
  const who = pick(w.identities, callerNo);
  const org = who.split('/')[0]!;
  const roles = [
    ...[...w.roles.keys()].filter((r) => r.split('/').length === 2 && r.startsWith(`${org}/`)),
    builtinRoleUid('owner'),
    builtinRoleUid('editor'),
  ];
  // Every other identity caller owns a folder below its organization (when there is one):
  // identities of the organization bound in that folder are referable by it, not listable.
  const folders = w.groups.filter((g) => below(org, g));
  const folder = callerNo % 3 === 2 && folders.length > 0 ? pick(folders, roleNo) : undefined;
  const group = folder ?? org;
  const role = folder === undefined ? pick(roles, roleNo) : builtinRoleUid('owner');
  if (!w.bindings.some((b) => b.identity === who && b.role === role && b.group === group)) {
    const made = await s.arbor.services.roleBindings.create(ADMIN, group, {
      identityUid: who,
      roleUid: role,
    });
    w.bindings.push({ uid: made.uid, group, identity: who, role, caps: w.roles.get(role)! });
  }
  return { caller: who, near: group };
}

/** Whether change `c` is a cascade that takes the caller's own bindings along. */
const takesCallerAlong = (w: ModelWorld, caller: string, c: ModelChange) =>
  'deleteGroup' in c &&
  caller !== 'admin' &&
  (covers(c.deleteGroup.uid, caller) ||
    w.bindings.some((b) => b.identity === caller && covers(c.deleteGroup.uid, b.group)));

/** One world, one caller, one change set: simulated, then made for real and compared. */
async function oneSet(w: ModelWorld, caller: string, changes: ModelChange[], st: Stats) {
  const mine = await s.arbor.services.accessSimulator.simulate(principalOf(caller), {
    changes,
    pageSize: 1,
  });
  const full = await simulateAll(ADMIN, changes);
  const before = await access(w, w.identities);
  const own = (xs: Iterable<string>) => [...xs].filter((x) => x.startsWith(`${caller} `)).join('|');
  const callerBefore = own(before);
  for (const [i, c] of changes.entries()) {
    const v = mine.changes[i]!;
    // A cascade taking the caller's own bindings along changes what it may do halfway
    // through its own steps: no single verdict covers that, and the set ends here.
    if (takesCallerAlong(w, caller, c)) return;
    const want = v.applied && v.permitted;
    // A bind of an identity the caller may not list: referable by a binding it sees.
    const referred =
      'createRoleBinding' in c &&
      caller !== 'admin' &&
      !(await s.arbor.authz.can(
        asIdentity(caller),
        'identity.list',
        c.createRoleBinding.identityUid,
      ));
    const got = await makeReal(caller, c);
    if (got && referred) st.referred++;
    if (got !== want)
      throw new Error(
        `change ${i} ${JSON.stringify(c)} by ${caller}: simulate said ${JSON.stringify(v)}, the real call ${got ? 'succeeded' : 'was refused'}\nchanges: ${JSON.stringify(changes)}`,
      );
    if (!got) {
      st.refused++;
      const why = v.reason?.replace(/[0-9a-f]{40}\S*/g, '…') ?? '?';
      st.refusals.set(why, (st.refusals.get(why) ?? 0) + 1);
      return;
    }
    st.made++;
    if (caller === 'admin') continue;
    st.byIdentities++;
    if (own(await access(w, [caller])) !== callerBefore) return;
  }
  // Every change was made: the delta is what the authorizer now answers differently.
  const after = await access(w, w.identities);
  const flipped = new Set([...before, ...after].filter((x) => before.has(x) !== after.has(x)));
  const want = predicted(w, full);
  const missing = [...flipped].filter((x) => !want.has(x));
  const extra = [...want].filter((x) => !flipped.has(x));
  if (missing.length > 0 || extra.length > 0)
    throw new Error(
      `the delta is not what happened\nchanges: ${JSON.stringify(changes)}\nnot predicted: ${missing.join(', ')}\npredicted, not so: ${extra.join(', ')}`,
    );
  st.deltas++;
}

test('access:simulate predicts, change by change, what the real calls and the real authorizer then do', async (t) => {
  const st: Stats = {
    made: 0,
    byIdentities: 0,
    refused: 0,
    deltas: 0,
    referred: 0,
    refusals: new Map(),
  };
  const size = { orgs: 2, groups: 5, identities: 4, roles: 3, bindings: 12, rolesBelowRoot: true };
  await fc.assert(
    fc.asyncProperty(
      worldArb(POOL, size),
      fc.nat(),
      fc.nat(),
      fc.array(changeArb, { minLength: 1, maxLength: 4 }),
      async (shape, callerNo, roleNo, shapes) => {
        const w = await buildWorld(s, shape, 'real');
        const { caller, near } = await callerOf(w, callerNo, roleNo);
        await oneSet(
          w,
          caller,
          shapes.map((x) => changeOf(w, x, near)),
          st,
        );
      },
    ),
    { numRuns: RUNS, seed: SEED, endOnFailure: true, includeErrorInReport: true },
  );
  t.log(
    `${RUNS} worlds: ${st.made} changes made (${st.byIdentities} by identities), ${st.refused} refused as predicted, ${st.deltas} deltas checked against the authorizer, ${st.referred} binds of identities the caller may not list; refusals: ${JSON.stringify(Object.fromEntries(st.refusals))}`,
  );
  // Neither side is idle: changes were made, by identities too, and refused, and deltas compared.
  t.true(st.made > 0 && st.byIdentities > 0 && st.refused > 0 && st.deltas > 0);
});
