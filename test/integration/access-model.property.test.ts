import test from 'ava';
import fc from 'fast-check';
import type { Authorizer, RequestContext } from '../../src/auth/authorizer.js';
import type { Capability } from '../../src/auth/capabilities.js';
import { ADMIN, type Principal } from '../../src/auth/principal.js';
import { parseListRequest } from '../../src/core/list-request.js';
import { isRpcError } from '../../src/core/rpc-error.js';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { IdentitiesService } from '../../src/gen/arbor/iam/v2beta1/identities_pb.js';
import { WHAT_CAN_LIST, WHO_CAN_LIST } from '../../src/resources/access/access.js';
import { GROUP_TYPE } from '../../src/resources/groups/group.js';
import { IDENTITY_TYPE } from '../../src/resources/identities/identity.js';
import * as model from '../helpers/access-model.js';
import { pick } from '../helpers/change-shapes.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { ISSUER } from '../helpers/iam-fixtures.js';
import {
  addConditions,
  authorizerWith,
  conditionalArb,
  CONTEXT_CLAIMS,
  CONTEXT_NAMES,
  CONTEXT_TYPES,
  requestOf,
} from '../helpers/model-conditions.js';
import { contextArb, questionArb, type Question } from '../helpers/model-questions.js';
import { buildWorld, MODEL_POOL, modelWorldArb } from '../helpers/model-world.js';

/**
 * The real authorizer, check, who-can, what-can, binding create and group delete against
 * the reference model (test/helpers/access-model.ts), on random trees, custom and built-in
 * roles, bindings (some expired, some scheduled to start later, some started on schedule,
 * some scheduled and expiring, some conditional) and questions asked by random callers; a
 * refusal must carry the code the model gives (NOT_FOUND, INVALID_ARGUMENT,
 * PERMISSION_DENIED, FAILED_PRECONDITION), not just be a refusal. A fixed seed;
 * ARBOR_MODEL_WORLDS and ARBOR_MODEL_SEED for more. Each world is built once through the
 * services and then asked QUESTIONS questions, so thousands of cases stay within seconds.
 *
 * Conditional bindings (the model's rule 6) carry conditions over the request's time, the
 * resource's group path, name and type, and a token claim, alone or under `!`, `&&`, `||`;
 * the model decides them by hand. They are asked where conditions are evaluated (REST and
 * gRPC Gets as the identity, the check, the authorizer given a request context with claims)
 * and where they must grant nothing (the authorizer without a context, a REST list, who-can,
 * what-can, the caller's own sight). Claims reach the authorizer here as a RequestContext,
 * not through a token: the doors' Gets carry none. A last test swaps in broken evaluators
 * (one that ignores the condition, one that turns time round) and asserts the property fails.
 */
const WORLDS = Number(process.env.ARBOR_MODEL_WORLDS ?? 25);
const QUESTIONS = 120;
const SEED = Number(process.env.ARBOR_MODEL_SEED ?? 20261125);

const POOL = MODEL_POOL;

let s: GrpcTestServer;
test.before(async () => {
  // REST and gRPC on one port: both doors' Gets are asked.
  s = await startGrpcServer();
});
test.after.always(async () => {
  await s?.close();
});

/** One organization, custom roles at its root: what the model (`access-model.ts`) knows. */
const worldArb = modelWorldArb({
  groups: 8,
  identities: 5,
  roles: 4,
  bindings: 10,
});

/** One conditional decision, as the authorizer under test takes it. */
type Decide = (p: Principal, cap: Capability, uid: string, ctx: RequestContext) => Promise<boolean>;

/** Each identity's API token, signed once: the doors' Gets are asked as the identity. */
const tokens = new Map<string, string>();
async function tokenOf(identity: string): Promise<string> {
  let t = tokens.get(identity);
  if (t === undefined) {
    t = (await s.arbor.tokens.sign(identity, { iss: ISSUER, sub: `model-${identity}` })).token;
    tokens.set(identity, t);
  }
  return t;
}

/** Callers: each identity of the world, and (one in n+1) the admin token. */
function callerOf(w: model.ModelWorld, i: number): model.Caller {
  const k = i % (w.identities.length + 1);
  return k === w.identities.length ? 'admin' : w.identities[k]!;
}

function principal(c: model.Caller): Principal {
  // A fresh object per question: the authorizer remembers grants per principal object.
  return c === 'admin' ? ADMIN : { kind: 'identity', uid: c };
}

/** A refusal as the model names it, by its google.rpc code; anything else is thrown on. */
function refusal(e: unknown): 'not found' | 'invalid' | 'denied' | 'not empty' {
  if (isRpcError(e)) {
    if (e.code === 5) return 'not found';
    if (e.code === 3) return 'invalid';
    if (e.code === 7) return 'denied';
    if (e.code === 9) return 'not empty';
  }
  throw e;
}

async function orNotFound<T>(f: () => Promise<T>): Promise<T | 'not found'> {
  try {
    return await f();
  } catch (e) {
    if (isRpcError(e) && e.code === 5) return 'not found';
    throw e;
  }
}

const proofs = (grants: { bindingUid: string; groupUid: string; path: string[] }[]) =>
  grants.map(({ bindingUid, groupUid, path }) => ({ bindingUid, groupUid, path }));

/** Every page of a list, following the cursor. */
async function allPages<T>(
  f: (token?: string) => Promise<{ items: T[]; nextPageToken?: string; totalCount: string }>,
): Promise<{ items: T[]; totals: Set<string> }> {
  const items: T[] = [];
  const totals = new Set<string>();
  let token: string | undefined;
  do {
    const page = await f(token);
    items.push(...page.items);
    totals.add(page.totalCount);
    token = page.nextPageToken;
  } while (token);
  return { items, totals };
}

/** The authorizer given a request context (claims too) against the model's rule 6. */
async function askContext(
  w: model.ModelWorld,
  q: Extract<Question, { kind: 'context' }>,
  decide: Decide,
): Promise<Asked> {
  const identity = pick(w.identities, q.identity);
  const cap = pick(POOL, q.cap);
  const node = pick(w.groups, q.node) + (q.below ? '/00000000000000ff' : '');
  const asked = {
    type: pick(CONTEXT_TYPES, q.type),
    name: pick(CONTEXT_NAMES, q.name),
    claims: pick(CONTEXT_CLAIMS, q.claims),
  };
  const ctx: RequestContext = {
    resource: { type: asked.type, name: asked.name },
    claims: asked.claims,
  };
  const real = await decide(principal(identity), cap, node, ctx);
  const r = requestOf(w, node, asked);
  return [
    real,
    model.can(w, identity, cap, node, r),
    model.decidedByCondition(w, identity, cap, node, r),
  ];
}

/**
 * A Get as the identity, through the door: the Gets pass the resource's type and no name
 * (docs/api.md); an identity always sees itself.
 */
async function askDoor(
  w: model.ModelWorld,
  q: Extract<Question, { kind: 'door' }>,
): Promise<Asked> {
  const identity = pick(w.identities, q.identity);
  const token = await tokenOf(identity);
  const group = q.target === 'group';
  const uid = group ? pick(w.groups, q.node) : pick(w.identities, q.node);
  const cap = group ? 'groups.list' : 'identity.list';
  const type = group ? GROUP_TYPE : IDENTITY_TYPE;
  const r = requestOf(w, uid, { type, name: '' });
  const self = uid === identity;
  const expected = self || model.can(w, identity, cap, uid, r);
  let real: boolean | number;
  if (q.door === 'rest') {
    const status = (
      await s.client(token).get(`/iam/v2beta1/${group ? 'groups' : 'identities'}/${uid}`)
    ).status;
    real = status === 200 ? true : status === 404 ? false : status;
  } else {
    const caller = s.grpc(token);
    const reply = group
      ? await caller.call(GroupsService, 'GetGroup', { uid })
      : await caller.call(IdentitiesService, 'GetIdentity', { uid });
    caller.close();
    real = reply.ok ? true : reply.code === 5 ? false : reply.code;
  }
  return [real, expected, self ? undefined : model.decidedByCondition(w, identity, cap, uid, r)];
}

/** Fail closed: a list is decided without a request, so only unconditional grants show. */
async function askList(
  w: model.ModelWorld,
  q: Extract<Question, { kind: 'list' }>,
): Promise<Asked> {
  const identity = pick(w.identities, q.identity);
  const token = await tokenOf(identity);
  const org = w.groups[0]!.split('/')[0]!;
  const r = await s
    .client(token)
    .get(`/iam/v2beta1/groups?uidp.descendants_of=${org}&page_size=200`);
  // Descendants: the organization itself is not among them.
  const expected = w.groups.filter((g) => g !== org && model.can(w, identity, 'groups.list', g));
  if (r.status !== 200) return [r.status, expected.sort()];
  const seen = (r.body.groups as { uid: string }[]).map((g) => g.uid);
  return [seen.sort(), expected.sort()];
}

/** A real answer, the model's, and for a conditional decision whether a condition decided it. */
type Asked = [unknown, unknown, ('granted' | 'denied')?];

/**
 * The real answer to `q` and the model's, in comparable form; for a conditional decision,
 * also whether a condition decided it (the model's `decidedByCondition`).
 */
async function ask(w: model.ModelWorld, q: Question, decide: Decide): Promise<Asked> {
  const sv = s.arbor.services;
  switch (q.kind) {
    case 'context':
      return askContext(w, q, decide);
    case 'door':
      return askDoor(w, q);
    case 'list':
      return askList(w, q);
    case 'can': {
      const identity = pick(w.identities, q.identity);
      const cap = pick(POOL, q.cap);
      // Anything hanging under a group is covered as the group is.
      const node = pick(w.groups, q.node) + (q.below ? '/00000000000000ff' : '');
      // No request context: conditional grants grant nothing here (rule 6).
      const real = await s.arbor.authz.can(principal(identity), cap, node);
      return [real, model.can(w, identity, cap, node)];
    }
    case 'check': {
      const c = callerOf(w, q.caller);
      const identity = pick(w.identities, q.identity);
      const cap = pick(POOL, q.cap);
      const group = pick(w.groups, q.node);
      const body = { identityUid: identity, capability: cap, groupUid: group };
      const real = await orNotFound(() => sv.access.check(principal(c), body));
      // The single check has its own, one-query path: it must answer as a batch of one.
      const batched = await orNotFound(
        async () => (await sv.access.batchCheck(principal(c), { checks: [body] }))[0]!,
      );
      const shape = (r: typeof real) =>
        r === 'not found' ? r : { allowed: r.allowed, grants: proofs(r.grants) };
      const expected = model.check(w, c, identity, cap, group);
      const conditional = new Set(w.bindings.filter((b) => b.condition).map((b) => b.uid));
      const byCondition =
        expected !== 'not found' &&
        expected.allowed &&
        expected.grants.every((g) => conditional.has(g.bindingUid));
      return [
        [shape(real), shape(batched)],
        [expected, expected],
        byCondition ? 'granted' : undefined,
      ];
    }
    case 'whoCan': {
      const c = callerOf(w, q.caller);
      const cap = pick(POOL, q.cap);
      const group = pick(w.groups, q.node);
      const base = { group, capability: cap, page_size: String(q.pageSize) };
      const real = await orNotFound(() =>
        allPages((token) =>
          sv.access.whoCan(
            principal(c),
            parseListRequest(token ? { ...base, page_token: token } : base, WHO_CAN_LIST),
          ),
        ),
      );
      const expected = model.whoCan(w, c, group, cap);
      if (real === 'not found') return [real, expected];
      return [
        {
          holders: real.items.map((h) => ({
            identityUid: h.identityUid,
            grants: proofs(h.grants),
          })),
          totals: [...real.totals],
        },
        expected === 'not found'
          ? expected
          : { holders: expected, totals: [String(expected.length)] },
      ];
    }
    case 'whatCan': {
      const c = callerOf(w, q.caller);
      const identity = pick(w.identities, q.identity);
      const real = await orNotFound(() =>
        sv.access.whatCan(principal(c), parseListRequest({ identity }, WHAT_CAN_LIST)),
      );
      return [
        real === 'not found'
          ? real
          : real.items.map((g) => ({
              groupUid: g.groupUid,
              bindingUids: g.bindings.map((b) => b.bindingUid).sort(),
              capabilities: g.capabilities,
              effectiveCapabilities: g.effectiveCapabilities,
              conditionalBindingUids: (g.conditional ?? []).map((c) => c.bindingUid).sort(),
            })),
        model.whatCan(w, c, identity),
      ];
    }
    case 'bind': {
      const c = callerOf(w, q.caller);
      const identity = pick(w.identities, q.identity);
      const role = pick([...w.roles.keys()], q.role);
      const group = pick(w.groups, q.node);
      if (w.bindings.some((b) => b.group === group && b.identity === identity && b.role === role))
        return ['already bound', 'already bound'];
      const expected = model.bindOutcome(w, c, group, identity, role);
      let outcome: model.BindOutcome = 'created';
      try {
        const created = await sv.roleBindings.create(principal(c), group, {
          identityUid: identity,
          roleUid: role,
        });
        // The world has changed: the model learns the new binding too.
        const caps = w.roles.get(role)!;
        w.bindings.push({ uid: created.uid, group, identity, role, caps });
      } catch (e) {
        outcome = refusal(e) as model.BindOutcome;
      }
      return [outcome, expected];
    }
    case 'deleteGroup': {
      const c = callerOf(w, q.caller);
      const group = pick(w.groups, q.node);
      const expected = model.deleteOutcome(w, c, group);
      let outcome: model.DeleteOutcome = 'deleted';
      try {
        await sv.groups.delete(principal(c), group);
        // Gone from the world: later questions ask about the groups that remain.
        w.groups.splice(w.groups.indexOf(group), 1);
      } catch (e) {
        outcome = refusal(e) as model.DeleteOutcome;
      }
      return [outcome, expected];
    }
  }
}

/** The real decision of a conditional grant: the server's own authorizer. */
const realDecide: Decide = (p, cap, uid, ctx) => s.arbor.authz.can(p, cap, uid, ctx);

/**
 * Run the property: `worlds` worlds, each with `questions` questions drawn from `questions`;
 * `decide` answers the questions about conditional decisions. Throws on a disagreement,
 * with the question and both answers in the message.
 */
async function property(opts: {
  worlds: number;
  questionArb: fc.Arbitrary<Question>;
  decide: Decide;
  onAsked?: (q: Question, real: unknown, byCondition?: 'granted' | 'denied') => void;
}): Promise<void> {
  await fc.assert(
    fc.asyncProperty(
      worldArb,
      conditionalArb,
      fc.array(opts.questionArb, { minLength: QUESTIONS, maxLength: QUESTIONS }),
      async (shape, conditional, questions) => {
        const w = await buildWorld(s, shape, 'model');
        await addConditions(s, w, conditional);
        for (const q of questions) {
          const [real, expected, byCondition] = await ask(w, q, opts.decide);
          opts.onAsked?.(q, real, byCondition);
          if (JSON.stringify(real) !== JSON.stringify(expected)) {
            const conditions = w.bindings
              .filter((b) => b.condition !== undefined)
              .map((b) => `${b.uid} ${b.identity}: ${model.expressionOf(b.condition!)}`);
            throw new Error(
              `${q.kind} disagrees\nquestion: ${JSON.stringify(q)}\nreal:  ${JSON.stringify(real)}\nmodel: ${JSON.stringify(expected)}\nconditions:\n  ${conditions.join('\n  ')}`,
            );
          }
        }
      },
    ),
    // Each run builds a world in the database: shrinking would rebuild many more. The
    // disagreement is in the report (fast-check keeps it only as the cause otherwise).
    { numRuns: opts.worlds, seed: SEED, endOnFailure: true, includeErrorInReport: true },
  );
}

test.serial(
  'access: the authorizer, check, who-can, what-can, no-escalation, deletes and conditional bindings on every door agree with the model',
  async (t) => {
    let asked = 0;
    const outcomes = new Map<string, number>();
    await property({
      worlds: WORLDS,
      questionArb,
      decide: realDecide,
      onAsked: (q, real, byCondition) => {
        asked++;
        const keys = [
          ...(['bind', 'deleteGroup'].includes(q.kind) ? [`${q.kind} ${String(real)}`] : []),
          ...(byCondition !== undefined ? [`${q.kind} ${byCondition} by a condition`] : []),
          ...(q.kind === 'door' ? [`door ${q.door} ${q.target}`] : []),
        ];
        for (const key of keys) outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      },
    });
    t.true(asked >= WORLDS * QUESTIONS);
    const seen = Object.fromEntries([...outcomes].sort());
    t.log(`${asked} questions in ${WORLDS} worlds; ${JSON.stringify(seen)}`);
    // Every outcome the model tells apart happened, so none of the comparisons is idle.
    for (const key of [
      'bind created',
      'bind not found',
      'bind invalid',
      'bind denied',
      'deleteGroup deleted',
      'deleteGroup not found',
      'deleteGroup denied',
      'deleteGroup not empty',
      // Conditions decided decisions both ways, on both doors and at the authorizer.
      'door granted by a condition',
      'door denied by a condition',
      'context granted by a condition',
      'context denied by a condition',
      'check granted by a condition',
      'door rest group',
      'door rest identity',
      'door grpc group',
      'door grpc identity',
    ])
      t.true((outcomes.get(key) ?? 0) > 0, `no ${key} in ${JSON.stringify(seen)}`);
  },
);

const decideBy =
  (a: Authorizer): Decide =>
  (p, cap, uid, ctx) =>
    a.can(p, cap, uid, ctx);

test.serial('access: a broken condition evaluator makes the property fail', async (t) => {
  const only = { worlds: 3, questionArb: contextArb as fc.Arbitrary<Question> };
  // The harness with the evaluator unchanged agrees: what fails below is the swap.
  await property({ ...only, decide: decideBy(authorizerWith(s, (c) => c)) });
  const ignoring = authorizerWith(s, (c) => ({
    ...c,
    evaluate: () => ({ result: true, values: {} }),
  }));
  const e1 = await t.throwsAsync(property({ ...only, decide: decideBy(ignoring) }));
  t.regex(e1?.message ?? '', /context disagrees[\s\S]*real: {2}true[\s\S]*model: false/);
  // Time turned round (an instant as far before the epoch as now is after it): before is after.
  const backwards = authorizerWith(s, (c) => ({
    ...c,
    evaluate: (input) => c.evaluate({ ...input, time: -input.time }),
  }));
  const e2 = await t.throwsAsync(property({ ...only, decide: decideBy(backwards) }));
  t.regex(e2?.message ?? '', /context disagrees[\s\S]*request\.time/);
});
