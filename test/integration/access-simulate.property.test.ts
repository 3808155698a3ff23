import test from 'ava';
import fc from 'fast-check';
import { CAPABILITIES } from '../../src/auth/capabilities.js';
import { ADMIN, type Principal } from '../../src/auth/principal.js';
import { Code } from '../../src/core/rpc-code.js';
import type { RpcError } from '../../src/core/rpc-error.js';
import type { SimulateAnswer } from '../../src/resources/access/simulate.js';
import type * as model from '../helpers/access-model.js';
import { changeArbOf, pick, removalOf, type RemovalShape } from '../helpers/change-shapes.js';
import { buildWorld, MODEL_POOL, modelWorldArb, type WorldShape } from '../helpers/model-world.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { entryCount, flatDeltas } from '../helpers/simulate-flat.js';
import * as sim from '../helpers/simulate-model.js';

/**
 * access:simulate against an independent model of the delta (test/helpers/simulate-model.ts)
 * on random worlds (trees, identities, custom and built-in roles, bindings, some expired,
 * some scheduled to start later, some started) and random change sets asked by random
 * callers: bindings created (no expiry, expired, expiring; starting at once, in the past,
 * in the future, at the far ends of time) and deleted (existing, or missing), custom and
 * built-in roles edited, identities and groups deleted. Every verdict's `applied`, every
 * delta (identity, capability, group, effect, proofs before and after with their windows,
 * holes) and the total must agree, paged with a random page size; a set that creates a
 * binding with an empty window must be refused whole (INVALID_ARGUMENT on that change's
 * notBefore). A fixed seed; ARBOR_SIM_WORLDS, ARBOR_SIM_SEED for more.
 */
const WORLDS = Number(process.env.ARBOR_SIM_WORLDS ?? 20);
const SETS = 60;
const SEED = Number(process.env.ARBOR_SIM_SEED ?? 20261127);

const POOL = MODEL_POOL;

let s: TestServer;
test.before(async () => {
  s = await startServer();
});
test.after.always(async () => {
  await s?.close();
});

/** One organization, custom roles at its root: what the model (`simulate-model.ts`) knows. */
const worldArb = modelWorldArb({
  groups: 7,
  identities: 4,
  roles: 3,
  bindings: 12,
  // Mostly plain bindings, so that most sets have a delta to compare.
  windows: ['always', 'always', 'always', 'ended', 'scheduled', 'started'],
});

/**
 * The model's world with a few conditional bindings besides (one per condition, where the
 * real create takes it): conditional deltas have something to lose, and the caller's sight
 * must not count them (model rule 8).
 */
async function build(shape: WorldShape): Promise<model.ModelWorld> {
  const w = await buildWorld(s, shape, 'sim');
  const custom = [...w.roles.keys()].filter((r) => !w.builtin.has(r));
  for (const [i, expression] of CONDITIONS.entries()) {
    const group = pick(w.groups, 3 * i + 1);
    const identity = pick(w.identities, i);
    const role = pick(custom.length > 0 ? custom : [...w.roles.keys()], i);
    const res = await s.admin.post(`/iam/v2beta1/roleBindings/${group}`, {
      identityUid: identity,
      roleUid: role,
      condition: { expression },
    });
    if (res.status !== 200) continue; // the same triple bound already, say
    const conditional: sim.SimBinding = {
      uid: (res.body as { uid: string }).uid,
      group,
      identity,
      role,
      caps: w.roles.get(role)!,
      when: expression,
    };
    w.bindings.push(conditional);
  }
  return w;
}

type ChangeShape =
  | {
      kind: 'create';
      group: number;
      identity: number;
      role: number;
      expiry: 'none' | 'past' | 'future';
      start: Start;
      /** An index into CONDITIONS, or -1: unconditional. */
      condition: number;
    }
  | RemovalShape;

/** A created binding's notBefore: none, an hour ago, in half an hour, or far off either way. */
type Start = 'none' | 'past' | 'future' | 'farPast' | 'farFuture';

/** Two conditions: the simulation never evaluates them, so any two distinct ones will do. */
const CONDITIONS = ['request.time.getHours() < 12', 'resource.type == "iam.arbor.dev/Group"'];

const START_AT: Record<Exclude<Start, 'none'>, () => string> = {
  past: () => new Date(Date.now() - 2 * 3_600_000).toISOString(),
  future: () => new Date(Date.now() + 1_800_000).toISOString(),
  farPast: () => '1970-01-01T00:00:00Z',
  farFuture: () => '9999-12-31T23:59:59.999Z',
};

const changeArb: fc.Arbitrary<ChangeShape> = changeArbOf(
  fc.record({
    kind: fc.constant('create' as const),
    group: fc.nat(),
    identity: fc.nat(),
    role: fc.nat(),
    expiry: fc.constantFrom('none' as const, 'none' as const, 'past' as const, 'future' as const),
    start: fc.constantFrom<Start>('none', 'none', 'none', 'past', 'future', 'farPast', 'farFuture'),
    condition: fc.constantFrom(-1, -1, -1, 0, 1),
  }),
  POOL,
);

const setArb = fc.record({
  caller: fc.nat(),
  pageSize: fc.constantFrom(0, 1, 3, 200),
  changes: fc.array(changeArb, { minLength: 1, maxLength: 5 }),
});

function changeOf(w: model.ModelWorld, c: ChangeShape): sim.ModelChange {
  switch (c.kind) {
    case 'create': {
      const at = { past: -3_600_000, future: 3_600_000, none: 0 }[c.expiry];
      return {
        createRoleBinding: {
          groupUid: pick(w.groups, c.group),
          identityUid: pick(w.identities, c.identity),
          roleUid: pick([...w.roles.keys()], c.role),
          ...(at === 0 ? {} : { expireTime: new Date(Date.now() + at).toISOString() }),
          ...(c.start === 'none' ? {} : { notBefore: START_AT[c.start]() }),
          ...(c.condition < 0 ? {} : { condition: { expression: CONDITIONS[c.condition]! } }),
        },
      };
    }
    default:
      return removalOf(w, c);
  }
}

function callerOf(w: model.ModelWorld, i: number): model.Caller {
  const k = i % (w.identities.length + 1);
  return k === w.identities.length ? 'admin' : w.identities[k]!;
}

function principal(c: model.Caller): Principal {
  return c === 'admin' ? ADMIN : { kind: 'identity', uid: c };
}

/** Every page of one simulation, following the cursor. */
async function simulateAll(c: model.Caller, changes: sim.ModelChange[], pageSize: number) {
  const pages: SimulateAnswer[] = [];
  let token: string | undefined;
  do {
    const body = { changes, pageSize, explain: true, ...(token ? { pageToken: token } : {}) };
    const page = await s.arbor.services.accessSimulator.simulate(principal(c), body);
    pages.push(page);
    token = page.nextPageToken;
  } while (token);
  return pages;
}

const shapeGrant = (g: {
  bindingUid?: string;
  changeIndex?: number;
  groupUid: string;
  path: string[];
  notBefore?: Date;
  expireTime?: Date;
}) => ({
  binding: g.bindingUid ?? `#${g.changeIndex}`,
  groupUid: g.groupUid,
  path: g.path,
  ...(g.notBefore === undefined ? {} : { notBefore: g.notBefore.toISOString() }),
  ...(g.expireTime === undefined ? {} : { expireTime: g.expireTime.toISOString() }),
});

/** The field violations of a refused simulation, or a rethrow of anything else. */
function violationsOf(e: unknown): string[] {
  const err = e as RpcError;
  if (err?.code !== Code.INVALID_ARGUMENT) throw e;
  return err.details.flatMap((d) =>
    'fieldViolations' in d ? d.fieldViolations.map((v) => `${v.field}: ${v.description}`) : [],
  );
}

test('access:simulate agrees with the model of the delta on random change sets', async (t) => {
  let sets = 0;
  let nonEmpty = 0;
  let notApplied = 0;
  let refused = 0;
  let scheduledGrants = 0;
  const kinds = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(
      worldArb,
      fc.array(setArb, { minLength: SETS, maxLength: SETS }),
      async (shape, asks) => {
        const w = await build(shape);
        for (const a of asks) {
          const c = callerOf(w, a.caller);
          const changes = a.changes.map((x) => changeOf(w, x));
          sets++;
          const empty = sim.emptyWindow(changes);
          if (empty !== undefined) {
            const got = await simulateAll(c, changes, a.pageSize).then(
              () => ['answered'],
              violationsOf,
            );
            const want = [
              `changes.${empty}.createRoleBinding.notBefore: notBefore must be before expireTime`,
            ];
            if (JSON.stringify(got.slice(0, 1)) !== JSON.stringify(want))
              throw new Error(`an empty window was not refused: ${JSON.stringify(got)}`);
            refused++;
            continue;
          }
          const expected = sim.simulate(w, c, changes, Date.now(), CAPABILITIES);
          const pages = await simulateAll(c, changes, a.pageSize);
          const real = {
            applied: pages[0]!.changes.map((v) => v.applied),
            deltas: flatDeltas(pages).map((d) => ({
              identity: d.identity.uid,
              capability: d.capability,
              group: d.group.uid,
              effect: d.effect,
              before: d.before.map(shapeGrant),
              after: d.after.map(shapeGrant),
              unchangedBelow: d.unchangedBelow,
              ...(d.condition === undefined ? {} : { condition: d.condition }),
            })),
            totals: [...new Set(pages.map((p) => p.totalCount))],
          };
          const want = { ...expected, totals: [entryCount(expected.deltas)] };
          for (const d of want.deltas)
            scheduledGrants += [...d.before, ...d.after].filter((g) => g.notBefore).length;
          if (want.deltas.length > 0) nonEmpty++;
          notApplied += want.applied.filter((x) => !x).length;
          for (const d of want.deltas) {
            const kind = d.condition === undefined ? d.effect : `${d.effect} when`;
            kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
          }
          if (JSON.stringify(real) !== JSON.stringify(want))
            throw new Error(
              `simulate disagrees\ncaller: ${c}\nchanges: ${JSON.stringify(changes)}\nreal:  ${JSON.stringify(real)}\nmodel: ${JSON.stringify(want)}`,
            );
        }
      },
    ),
    { numRuns: WORLDS, seed: SEED, endOnFailure: true, includeErrorInReport: true },
  );
  t.log(
    `${sets} change sets in ${WORLDS} worlds: ${nonEmpty} with a delta, ${notApplied} changes not applied, ${refused} refused (empty window), ${scheduledGrants} grants citing a notBefore, ${JSON.stringify(Object.fromEntries(kinds))}`,
  );
  // 1,200 by default (the simulator's property bar is at least 1,000).
  t.is(sets, WORLDS * SETS);
  // None of the comparisons is idle: deltas of both kinds and refused changes happened.
  t.true(nonEmpty > (sets - refused) / 4);
  t.true((kinds.get('GAIN') ?? 0) > 0 && (kinds.get('LOSE') ?? 0) > 0);
  // Conditional gains and losses were compared too (a conditional binding the set made,
  // then lost to a later delete or role edit).
  t.true((kinds.get('GAIN when') ?? 0) > 0 && (kinds.get('LOSE when') ?? 0) > 0);
  t.true(notApplied > 0);
  // Scheduled grants were cited, and empty windows refused, but not so often as to crowd out
  // the comparisons.
  t.true(scheduledGrants > 0);
  t.true(refused > 0 && refused < sets / 4);
});
