import fc from 'fast-check';
import { Authorizer } from '../../src/auth/authorizer.js';
import type { CompiledCondition } from '../../src/auth/condition.js';
import { ADMIN } from '../../src/auth/principal.js';
import { KnexGrantSource } from '../../src/db/stores/grant-source.js';
import { KnexNameStore } from '../../src/db/stores/name-store.js';
import { KnexUnitOfWork } from '../../src/db/unit-of-work.js';
import { conditionDeps } from '../../src/resources/names/condition-groups.js';
import { GROUP_TYPE } from '../../src/resources/groups/group.js';
import { IDENTITY_TYPE } from '../../src/resources/identities/identity.js';
import { placementViolations } from '../../src/resources/role-bindings/role-binding-input.js';
import * as model from './access-model.js';
import { pick } from './change-shapes.js';
import type { TestServer } from './server.js';

/**
 * Conditional bindings for the access model's worlds (access-model.ts, rule 6): shapes
 * drawn as numbers into a world (so fast-check shrinks them whatever the world), turned
 * into the model's conditions, bound through the services; and the request contexts the
 * authorizer is asked with.
 */

/** A conditional binding's shape: numbers into the world, as the world's are. */
type CondShape =
  | { kind: 'time'; after: boolean; ahead: boolean }
  | { kind: 'groupPath'; node: number; cut: 0 | 1 | 2 }
  | { kind: 'name'; prefix: string }
  | { kind: 'type'; identity: boolean }
  | { kind: 'claim'; value: string };
export type CondTree =
  CondShape | { kind: 'not'; of: CondShape } | { kind: 'and' | 'or'; of: [CondShape, CondShape] };

const condShapeArb: fc.Arbitrary<CondShape> = fc.oneof(
  fc.record({ kind: fc.constant('time' as const), after: fc.boolean(), ahead: fc.boolean() }),
  fc.record({
    kind: fc.constant('groupPath' as const),
    node: fc.nat(),
    cut: fc.constantFrom(0 as const, 1 as const, 2 as const),
  }),
  fc.record({ kind: fc.constant('name' as const), prefix: fc.constantFrom('', 'repo') }),
  fc.record({ kind: fc.constant('type' as const), identity: fc.boolean() }),
  fc.record({ kind: fc.constant('claim' as const), value: fc.constantFrom('main', 'dev') }),
);
const condTreeArb: fc.Arbitrary<CondTree> = fc.oneof(
  { weight: 3, arbitrary: condShapeArb },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('not' as const), of: condShapeArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom('and' as const, 'or' as const),
      of: fc.tuple(condShapeArb, condShapeArb),
    }),
  },
);
export const conditionalArb = fc.array(
  fc.record({ identity: fc.nat(), role: fc.nat(), group: fc.nat(), condition: condTreeArb }),
  { minLength: 1, maxLength: 6 },
);
export type ConditionalShape = {
  identity: number;
  role: number;
  group: number;
  condition: CondTree;
};

const DAY = 86_400_000;

/** A shape as the model's condition, in world `w` (a day either side of now: never on the edge). */
function conditionOf(w: model.ModelWorld, c: CondTree, now: number): model.ModelCondition {
  switch (c.kind) {
    case 'not':
      return { not: conditionOf(w, c.of, now) };
    case 'and':
    case 'or': {
      const both: [model.ModelCondition, model.ModelCondition] = [
        conditionOf(w, c.of[0], now),
        conditionOf(w, c.of[1], now),
      ];
      return c.kind === 'and' ? { and: both } : { or: both };
    }
    case 'time': {
      const at = now + (c.ahead ? DAY : -DAY);
      return c.after ? { after: at } : { before: at };
    }
    case 'groupPath': {
      // The whole path, the path and a slash (strictly below), or one character short
      // (a sibling named alike matches too: startsWith is over text, not the tree).
      const full = model.groupPathOf(w, pick(w.groups, c.node));
      const prefix = c.cut === 0 ? full : c.cut === 1 ? `${full}/` : full.slice(0, -1);
      return { groupPathStartsWith: prefix };
    }
    case 'name':
      return { nameStartsWith: c.prefix };
    case 'type':
      return { typeIs: c.identity ? IDENTITY_TYPE : GROUP_TYPE };
    case 'claim':
      return { claim: 'ref', equals: c.value };
  }
}

/** A request context as the authorizer takes it, and the model's request for it. */
export interface AskedContext {
  type: string;
  name: string;
  claims: ReadonlyMap<string, string>;
}
export const CONTEXT_TYPES = [GROUP_TYPE, IDENTITY_TYPE, ''];
export const CONTEXT_NAMES = ['', 'repo/app', 'other'];
export const CONTEXT_CLAIMS: ReadonlyMap<string, string>[] = [
  new Map(),
  new Map([['ref', 'main']]),
  new Map([['ref', 'dev']]),
  new Map([['sub', 'main']]),
];

export const requestOf = (
  w: model.ModelWorld,
  uid: string,
  c: Omit<AskedContext, 'claims'> & { claims?: ReadonlyMap<string, string> },
): model.ModelRequest => ({
  time: Date.now(),
  groupPath: model.groupPathOf(w, uid),
  type: c.type,
  name: c.name,
  claims: c.claims ?? new Map(),
});

/**
 * Learn each group's path of names in `w` (read back as the admin), then add the
 * conditional bindings of `conditional` (each with its condition as the model spells it); a
 * second binding of the same (group, identity, role), or a misplaced one, is left out.
 */
export async function addConditions(
  s: TestServer,
  w: model.ModelWorld,
  conditional: ConditionalShape[],
): Promise<void> {
  const sv = s.arbor.services;
  const paths = new Map<string, string>();
  for (const g of w.groups) {
    const name = (await sv.groups.get(ADMIN, g)).name;
    const parent = g.includes('/') ? paths.get(g.slice(0, g.lastIndexOf('/'))) : undefined;
    paths.set(g, parent === undefined ? name : `${parent}/${name}`);
  }
  w.groupPaths = paths;
  const now = Date.now();
  for (const c of conditional) {
    const identity = pick(w.identities, c.identity);
    const role = pick([...w.roles.keys()], c.role);
    const group = pick(w.groups, c.group);
    const taken = w.bindings.some(
      (b) => b.group === group && b.identity === identity && b.role === role,
    );
    if (taken || placementViolations(group, identity, role).length > 0) continue;
    const condition = conditionOf(w, c.condition, now);
    const made = await sv.roleBindings.create(ADMIN, group, {
      identityUid: identity,
      roleUid: role,
      condition: { expression: model.expressionOf(condition) },
    });
    w.bindings.push({ uid: made.uid, group, identity, role, caps: w.roles.get(role)!, condition });
  }
  // Bound through the services: the grants were forgotten as each was made.
}

/**
 * The authorizer as the server builds it, over the same database, but with each condition
 * passed through `swap` first: the broken evaluators a test must catch.
 */
export function authorizerWith(
  s: TestServer,
  swap: (c: CompiledCondition) => CompiledCondition,
): Authorizer {
  const uow = new KnexUnitOfWork(s.db.knex);
  const source = new KnexGrantSource(uow);
  const swapped = {
    grantsOf: async (uid: string) =>
      (await source.grantsOf(uid)).map((g) =>
        g.condition === undefined
          ? g
          : { ...g, condition: { ...g.condition, compiled: swap(g.condition.compiled) } },
      ),
  };
  return new Authorizer(
    swapped,
    Date.now,
    undefined,
    conditionDeps(uow, new KnexNameStore(), s.arbor.logger),
  );
}
