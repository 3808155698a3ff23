import test from 'ava';
import fc from 'fast-check';
import type { Capability } from '../../src/auth/capabilities.js';
import { ADMIN, type Principal } from '../../src/auth/principal.js';
import type { SimulateAnswer } from '../../src/resources/access/simulate.js';
import type { Caller } from '../helpers/access-model.js';
import { pick } from '../helpers/change-shapes.js';
import { buildWorld, worldArb, type WorldShape } from '../helpers/model-world.js';
import { startServer, type TestServer } from '../helpers/server.js';
import {
  simulateDelegation,
  type DelegationChange,
  type ModelPolicy,
} from '../helpers/simulate-delegation-model.js';

/**
 * access:simulate's delegation entries against an independent model
 * (test/helpers/simulate-delegation-model.ts), on random worlds with random delegation
 * policies, asked by random callers (the admin, identities that may or may not list and
 * update identities) with random sets of policy sets and clears, identity deletes and group
 * deletes, some naming missing uids. Every verdict's `applied` and every delegation entry,
 * over every page, must agree: a policy the caller may not read never shows. A fixed seed;
 * ARBOR_SIM_WORLDS, ARBOR_SIM_SEED for more.
 */
const WORLDS = Number(process.env.ARBOR_SIM_WORLDS ?? 12);
const SETS = 40;
const SEED = Number(process.env.ARBOR_SIM_SEED ?? 20261129);

const POOL: Capability[] = [
  'groups.list',
  'identity.list',
  'identity.update',
  'role_bindings.list',
  'repo.list',
];
const CAPS: Capability[] = ['groups.list', 'identity.list', 'repo.list'];
const LIFETIMES = [undefined, 60, 900, 86_400];

let s: TestServer;
test.before(async () => {
  s = await startServer();
});
test.after.always(async () => {
  await s?.close();
});

const shapeArb = worldArb(POOL, {
  orgs: 1,
  groups: 6,
  identities: 5,
  roles: 3,
  bindings: 10,
  rolesBelowRoot: false,
  windows: ['always'],
});

const policyArb = fc.record({
  subject: fc.nat(),
  actors: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
  caps: fc.subarray(CAPS, { minLength: 1 }),
  life: fc.nat(),
});

type Shape =
  | {
      kind: 'set';
      subject: number;
      actors: number[];
      caps: Capability[];
      life: number;
      missing: boolean;
    }
  | { kind: 'deleteIdentity'; identity: number }
  | { kind: 'deleteGroup'; group: number };

const changeArb: fc.Arbitrary<Shape> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('set' as const),
      subject: fc.nat(),
      // Empty: the policy cleared.
      actors: fc.array(fc.nat(), { maxLength: 3 }),
      caps: fc.subarray(CAPS, { minLength: 1 }),
      life: fc.nat(),
      missing: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('deleteIdentity' as const), identity: fc.nat() }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('deleteGroup' as const), group: fc.nat() }),
  },
);

const setArb = fc.record({
  caller: fc.nat(),
  pageSize: fc.constantFrom(0, 1, 2, 200),
  changes: fc.array(changeArb, { minLength: 1, maxLength: 4 }),
});

/** Actors other than the subject (the schema refuses an identity acting for itself). */
const actorsOf = (ids: readonly string[], subject: string, picks: readonly number[]) =>
  [...new Set(picks.map((i) => pick(ids, i)))].filter((a) => a !== subject);

function changeOf(ids: string[], groups: string[], c: Shape): DelegationChange {
  if (c.kind === 'deleteIdentity') return { deleteIdentity: { uid: pick(ids, c.identity) } };
  if (c.kind === 'deleteGroup') return { deleteGroup: { uid: pick(groups, c.group) } };
  const subject = c.missing ? `${pick(groups, c.subject)}/00000000000000ab` : pick(ids, c.subject);
  const actors = actorsOf(ids, subject, c.actors);
  const life = pick(LIFETIMES, c.life);
  return {
    setDelegationPolicy: {
      identityUid: subject,
      actors,
      ...(actors.length > 0 ? { capabilities: c.caps } : {}),
      ...(actors.length > 0 && life !== undefined ? { maxLifetimeSeconds: life } : {}),
    },
  };
}

type PolicyShape = { subject: number; actors: number[]; caps: Capability[]; life: number };

async function build(shape: WorldShape, shapes: readonly PolicyShape[]) {
  const w = await buildWorld(s, shape, 'deleg');
  const made = new Map<string, ModelPolicy>();
  for (const p of shapes) {
    const subject = pick(w.identities, p.subject);
    const actors = actorsOf(w.identities, subject, p.actors);
    if (actors.length === 0) continue;
    const life = pick(LIFETIMES, p.life);
    const res = await s.admin.post('/iam/v2beta1/identities:setDelegationPolicy', {
      identityUid: subject,
      actors,
      capabilities: p.caps,
      ...(life === undefined ? {} : { maxLifetimeSeconds: life }),
    });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    made.set(subject, {
      actors: [...actors].sort(),
      capabilities: [...p.caps].sort(),
      maxLifetimeSeconds: life ?? 3600,
    });
  }
  return { w, policies: made };
}

const principal = (c: Caller): Principal => (c === 'admin' ? ADMIN : { kind: 'identity', uid: c });

test('access:simulate agrees with the delegation model on random sets', async (t) => {
  let sets = 0;
  const effects = new Map<string, number>();
  let hiddenPolicies = 0;
  await fc.assert(
    fc.asyncProperty(
      shapeArb,
      fc.array(policyArb, { minLength: 1, maxLength: 4 }),
      fc.array(setArb, { minLength: SETS, maxLength: SETS }),
      async (shape, policyShapes, asks) => {
        const { w, policies } = await build(shape, policyShapes);
        for (const a of asks) {
          const k = a.caller % (w.identities.length + 1);
          const c: Caller = k === w.identities.length ? 'admin' : w.identities[k]!;
          const changes = a.changes.map((x) => changeOf(w.identities, w.groups, x));
          sets++;
          const want = simulateDelegation(w, policies, c, changes);
          const pages: SimulateAnswer[] = [];
          let token: string | undefined;
          do {
            const page = await s.arbor.services.accessSimulator.simulate(principal(c), {
              changes,
              pageSize: a.pageSize,
              ...(token ? { pageToken: token } : {}),
            });
            pages.push(page);
            token = page.nextPageToken;
          } while (token);
          const got = {
            applied: pages[0]!.changes.map((v) => v.applied),
            deltas: pages
              .flatMap((p) => p.delegationDeltas)
              .map((d) => ({
                subject: d.subject.uid,
                actor: d.actor.uid,
                effect: d.effect,
                ...(d.before ? { before: d.before } : {}),
                ...(d.after ? { after: d.after } : {}),
              })),
          };
          for (const d of want.deltas) effects.set(d.effect, (effects.get(d.effect) ?? 0) + 1);
          if (c !== 'admin')
            hiddenPolicies +=
              simulateDelegation(w, policies, 'admin', changes).deltas.length - want.deltas.length;
          if (JSON.stringify(got) !== JSON.stringify(want))
            throw new Error(
              `simulate disagrees\ncaller: ${c}\npolicies: ${JSON.stringify([...policies])}\nchanges: ${JSON.stringify(changes)}\nreal:  ${JSON.stringify(got)}\nmodel: ${JSON.stringify(want)}`,
            );
        }
      },
    ),
    { numRuns: WORLDS, seed: SEED, endOnFailure: true, includeErrorInReport: true },
  );
  t.log(
    `${sets} sets in ${WORLDS} worlds: ${JSON.stringify(Object.fromEntries(effects))}, ${hiddenPolicies} entries the admin saw that the caller did not`,
  );
  t.is(sets, WORLDS * SETS);
  // None of the comparisons is idle: every effect happened, and callers were kept from some.
  for (const e of ['GAIN', 'LOSE', 'CHANGE']) t.true((effects.get(e) ?? 0) > 0, e);
  t.true(hiddenPolicies > 0);
});
