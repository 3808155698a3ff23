import test from 'ava';
import fc from 'fast-check';
import type { Capability } from '../../src/auth/capabilities.js';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { IdentitiesService } from '../../src/gen/arbor/iam/v2beta1/identities_pb.js';
import type * as model from '../helpers/access-model.js';
import { pick } from '../helpers/change-shapes.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { ISSUER } from '../helpers/iam-fixtures.js';
import { buildWorld, MODEL_POOL, modelWorldArb } from '../helpers/model-world.js';
import {
  exchangeOutcome,
  tokenCan,
  tokenCheck,
  type ModelPolicy,
  type ModelToken,
  type TokenAsk,
} from '../helpers/model-tokens.js';

/**
 * Down-scoped and delegated API tokens against the access model (test/helpers/model-tokens.ts
 * over access-model.ts): on random worlds (model-world.ts) with random delegation policies,
 * real tokens are exchanged at the real token endpoint (RFC 8693: `scope`, `resource`
 * groups, `actor_token`), each exchange's outcome (the token, or invalid_grant,
 * invalid_scope, invalid_target) must be the model's, and each issued token is asked
 * questions on every door: the authorizer as the authenticator makes the token's
 * principal, REST and gRPC Gets, and the access check through the token (REST and gRPC);
 * every answer must be the model's (identity ∩ scope ∩ groups ∩ policy). The policies then
 * change and each delegated token is asked again: it holds what its policy allows now.
 * No conditional bindings are drawn (access-model.property.test.ts asks those); the
 * model's `can` decides them here as there. The same answers are also
 * compared with wrong models (ignoring the scope, the groups, or the policy): each must
 * disagree somewhere, so the comparisons can fail. A fixed seed; ARBOR_MODEL_WORLDS and
 * ARBOR_MODEL_SEED for more.
 */
const WORLDS = Number(process.env.ARBOR_MODEL_WORLDS ?? 30);
const SEED = Number(process.env.ARBOR_MODEL_SEED ?? 20261129);
const QUESTIONS = 20;
const POOL = MODEL_POOL;
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

let s: GrpcTestServer;
test.before(async () => {
  s = await startGrpcServer();
});
test.after.always(async () => {
  await s?.close();
});

/** Mostly bindings that hold now, so that most exchanges have something to narrow. */
const worldArb = modelWorldArb({
  groups: 6,
  identities: 4,
  roles: 3,
  bindings: 10,
  windows: ['always', 'always', 'always', 'ended', 'scheduled', 'started', 'scheduledEnding'],
});

/** Each identity's policy (by index): an actor among the others, capabilities from POOL. */
const policiesArb = fc.array(
  fc.option(fc.record({ actor: fc.nat(), caps: fc.subarray(POOL, { minLength: 1 }) }), {
    nil: undefined,
    freq: 4,
  }),
  { minLength: 4, maxLength: 4 },
);

/** What one exchange asks: numbers into the world, wrapped round by `pick`. */
const askArb = fc.record({
  identity: fc.nat(),
  scope: fc.option(fc.subarray(POOL, { minLength: 1, maxLength: 4 }), { nil: undefined }),
  groups: fc.option(fc.array(fc.nat(), { minLength: 1, maxLength: 2 }), {
    nil: undefined,
    freq: 2,
  }),
  // The actor: an even number delegates as a policy allows, an odd one tries any (askOf).
  actor: fc.option(fc.nat(), { nil: undefined, freq: 2 }),
});
type AskShape = typeof askArb extends fc.Arbitrary<infer T> ? T : never;

type Question =
  | { kind: 'can'; cap: number; node: number; below: boolean }
  | { kind: 'door'; door: 'rest' | 'grpc'; node: number; target: 'group' | 'identity' }
  | {
      kind: 'check';
      door: 'rest' | 'grpc';
      self: boolean;
      identity: number;
      cap: number;
      node: number;
    };

const checkArb = fc.record({
  kind: fc.constant('check' as const),
  door: fc.constantFrom('rest' as const, 'grpc' as const),
  self: fc.boolean(),
  identity: fc.nat(),
  cap: fc.nat(),
  node: fc.nat(),
});

const questionArb: fc.Arbitrary<Question> = fc.oneof(
  fc.record({
    kind: fc.constant('can' as const),
    cap: fc.nat(),
    node: fc.nat(),
    below: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('door' as const),
    door: fc.constantFrom('rest' as const, 'grpc' as const),
    node: fc.nat(),
    target: fc.constantFrom('group' as const, 'identity' as const),
  }),
  // Weighed double: the check's answers are the richest.
  checkArb,
  checkArb,
);

/** The world's policies, set for real as the admin. */
async function setPolicies(
  w: model.ModelWorld,
  shapes: ({ actor: number; caps: Capability[] } | undefined)[],
): Promise<Map<string, ModelPolicy>> {
  const out = new Map<string, ModelPolicy>();
  const n = w.identities.length;
  for (const [k, p] of shapes.entries()) {
    if (p === undefined || k >= n) continue;
    const identity = w.identities[k]!;
    // Never itself: one of the others.
    const actor = w.identities[(k + 1 + (p.actor % (n - 1))) % n]!;
    const r = await s.admin.post('/iam/v2beta1/identities:setDelegationPolicy', {
      identityUid: identity,
      actors: [actor],
      capabilities: p.caps,
    });
    if (r.status !== 200) throw new Error(`setDelegationPolicy: ${JSON.stringify(r.body)}`);
    out.set(identity, { actors: [actor], caps: new Set(p.caps) });
  }
  return out;
}

/** An unrestricted API token of `identity`, as the STS would sign it. */
async function apiToken(identity: string): Promise<string> {
  return (await s.arbor.tokens.sign(identity, { iss: ISSUER, sub: `tok-${identity}` })).token;
}

/** The real exchange at POST /oauth2/token: the token, or the RFC 6749 error. */
async function exchange(ask: TokenAsk): Promise<{ token: string } | { error: string }> {
  const form = new URLSearchParams({
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: await apiToken(ask.identity),
    subject_token_type: ACCESS_TOKEN,
  });
  if (ask.scope !== undefined) form.set('scope', ask.scope.join(' '));
  for (const g of ask.groups ?? []) form.append('resource', g);
  if (ask.actor !== undefined) {
    form.set('actor_token', await apiToken(ask.actor));
    form.set('actor_token_type', ACCESS_TOKEN);
  }
  const res = await fetch(`${s.url}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  const body = (await res.json()) as { access_token?: string; error?: string };
  if (res.status === 200 && body.access_token) return { token: body.access_token };
  if (res.status === 400 && body.error) return { error: body.error };
  throw new Error(`token endpoint: ${res.status} ${JSON.stringify(body)}`);
}

function askOf(w: model.ModelWorld, policies: Map<string, ModelPolicy>, a: AskShape): TokenAsk {
  // An even actor number: a subject with a policy, the actor it names and a scope within
  // it (so that delegations are mostly issued); odd: any subject, any actor, any scope.
  const withPolicy = [...policies.keys()];
  const delegating = a.actor !== undefined && a.actor % 2 === 0 && withPolicy.length > 0;
  const identity = delegating ? pick(withPolicy, a.identity) : pick(w.identities, a.identity);
  const policy = policies.get(identity);
  const actor =
    a.actor === undefined
      ? undefined
      : delegating
        ? policy!.actors[0]!
        : pick(w.identities, a.actor);
  const within = delegating ? a.scope?.filter((c) => policy!.caps.has(c)) : a.scope;
  const scope = within === undefined || within.length === 0 ? undefined : within;
  return {
    identity,
    ...(scope === undefined ? {} : { scope }),
    ...(a.groups === undefined ? {} : { groups: a.groups.map((g) => pick(w.groups, g)) }),
    ...(actor === undefined ? {} : { actor }),
  };
}

/** What the model answers `q` of token `t` (the model of the token, rightly or wrongly). */
function expectedOf(w: model.ModelWorld, t: ModelToken, q: Question): unknown {
  switch (q.kind) {
    case 'can': {
      const node = pick(w.groups, q.node) + (q.below ? '/00000000000000ff' : '');
      return tokenCan(w, t, pick(POOL, q.cap), node);
    }
    case 'door': {
      const group = q.target === 'group';
      const uid = group ? pick(w.groups, q.node) : pick(w.identities, q.node);
      // What the identity may do without any capability (read itself) stays open.
      if (!group && uid === t.identity) return true;
      return tokenCan(w, t, group ? 'groups.list' : 'identity.list', uid);
    }
    case 'check': {
      const identity = q.self ? t.identity : pick(w.identities, q.identity);
      const r = tokenCheck(w, t, identity, pick(POOL, q.cap), pick(w.groups, q.node));
      return r === 'not found'
        ? r
        : { allowed: r.allowed, grants: r.grants.map((g) => g.bindingUid) };
    }
  }
}

/** The real answer to `q`, asked through `token`. */
async function realOf(w: model.ModelWorld, t: ModelToken, token: string, q: Question) {
  switch (q.kind) {
    case 'can': {
      const node = pick(w.groups, q.node) + (q.below ? '/00000000000000ff' : '');
      // A fresh principal per question, as per request: the authorizer remembers per object.
      const p = await s.arbor.authenticator.authenticate(token);
      return s.arbor.authz.can(p, pick(POOL, q.cap), node);
    }
    case 'door': {
      const group = q.target === 'group';
      const uid = group ? pick(w.groups, q.node) : pick(w.identities, q.node);
      if (q.door === 'rest') {
        const path = `/iam/v2beta1/${group ? 'groups' : 'identities'}/${uid}`;
        const status = (await s.client(token).get(path)).status;
        return status === 200 ? true : status === 404 ? false : status;
      }
      const caller = s.grpc(token);
      try {
        const reply = group
          ? await caller.call(GroupsService, 'GetGroup', { uid })
          : await caller.call(IdentitiesService, 'GetIdentity', { uid });
        return reply.ok ? true : reply.code === 5 ? false : reply.code;
      } finally {
        caller.close();
      }
    }
    case 'check':
      return realCheck(w, t, token, q);
  }
}

/** The access check through `token`, on its door: not found, or allowed and the grants. */
async function realCheck(
  w: model.ModelWorld,
  t: ModelToken,
  token: string,
  q: Extract<Question, { kind: 'check' }>,
) {
  const identity = q.self ? t.identity : pick(w.identities, q.identity);
  const body = {
    identityUid: identity,
    capability: pick(POOL, q.cap),
    groupUid: pick(w.groups, q.node),
  };
  if (q.door === 'grpc') {
    const caller = s.grpc(token);
    try {
      const reply = await caller.call(AccessService, 'CheckAccess', body);
      if (!reply.ok) return reply.code === 5 ? 'not found' : reply.code;
      const json = reply.json as { allowed?: boolean; grants?: { bindingUid: string }[] };
      const grants = (json.grants ?? []).map((g) => g.bindingUid).sort();
      return { allowed: json.allowed ?? false, grants };
    } finally {
      caller.close();
    }
  }
  const r = await s.client(token).post('/iam/v2beta1/access:check', body);
  if (r.status === 404) return 'not found';
  if (r.status !== 200) return r.status;
  const grants = (r.body.grants as { bindingUid: string }[]).map((g) => g.bindingUid).sort();
  return { allowed: r.body.allowed as boolean, grants };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Wrong models: each must disagree with the real answers somewhere. */
const WRONG: Record<string, (t: ModelToken) => ModelToken> = {
  'ignoring the scope': ({ scope: _, ...t }) => t,
  'ignoring the groups': ({ groups: _, ...t }) => t,
  'ignoring the policy': ({ delegation: _, ...t }) => t,
};

test.serial(
  'tokens: down-scoped and delegated tokens from the token endpoint answer on every door as the model (identity ∩ scope ∩ groups ∩ policy)',
  async (t) => {
    const outcomes = new Map<string, number>();
    const count = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
    const caught = new Map<string, string>();
    await fc.assert(
      fc.asyncProperty(
        worldArb,
        policiesArb,
        fc.array(fc.subarray(POOL, { minLength: 1 }), { minLength: 1, maxLength: 4 }),
        fc.array(askArb, { minLength: 8, maxLength: 8 }),
        fc.array(questionArb, { minLength: QUESTIONS, maxLength: QUESTIONS }),
        async (shape, policyShapes, later, asks, questions) => {
          const w = await buildWorld(s, shape, 'tokens');
          const policies = await setPolicies(w, policyShapes);
          const issued: { a: TokenAsk; t: ModelToken; token: string }[] = [];
          const describe = (a: TokenAsk) =>
            `ask: ${JSON.stringify(a)}\npolicies: ${JSON.stringify([...policies].map(([k, p]) => [k, p.actors, [...p.caps]]))}`;
          /** Every question of `t`, asked through `token`: the real answers against the model's. */
          const askAll = async (a: TokenAsk, t: ModelToken, token: string, phase: string) => {
            for (const q of questions) {
              const got = await realOf(w, t, token, q);
              const want = expectedOf(w, t, q);
              if (!same(got, want))
                throw new Error(
                  `${q.kind} disagrees (${phase})\n${describe(a)}\nquestion: ${JSON.stringify(q)}\nreal:  ${JSON.stringify(got)}\nmodel: ${JSON.stringify(want)}`,
                );
              count(
                `${q.kind}${q.kind === 'can' ? '' : ` ${q.door}`} ${JSON.stringify(got).slice(0, 12)}`,
              );
              for (const [name, wrong] of Object.entries(WRONG))
                if (!caught.has(name) && !same(got, expectedOf(w, wrong(t), q)))
                  caught.set(
                    name,
                    `${phase} ${q.kind} ${JSON.stringify(q)} with ${JSON.stringify(a)}`,
                  );
            }
          };
          for (const a of asks.map((x) => askOf(w, policies, x))) {
            const expected = exchangeOutcome(w, policies, a);
            const real = await exchange(a);
            if (typeof expected === 'string' || 'error' in real) {
              const got = 'error' in real ? real.error : 'issued';
              const want = typeof expected === 'string' ? expected : 'issued';
              if (got !== want)
                throw new Error(
                  `exchange disagrees\n${describe(a)}\nreal:  ${got}\nmodel: ${want}`,
                );
              count(`exchange ${got}`);
              continue;
            }
            count(
              `exchange issued${a.actor ? ' delegated' : ''}${a.scope ? ' scoped' : ''}${a.groups ? ' grouped' : ''}`,
            );
            issued.push({ a, t: expected, token: real.token });
            await askAll(a, expected, real.token, 'issued');
          }
          // The policies change (same actors, other capabilities): a delegated token holds
          // what its subject's policy allows now, not what it allowed at the exchange.
          for (const [identity, p] of policies) {
            const caps = later[w.identities.indexOf(identity) % later.length]!;
            const r = await s.admin.post('/iam/v2beta1/identities:setDelegationPolicy', {
              identityUid: identity,
              actors: p.actors,
              capabilities: caps,
            });
            if (r.status !== 200) throw new Error(`setDelegationPolicy: ${JSON.stringify(r.body)}`);
            policies.set(identity, { actors: p.actors, caps: new Set(caps) });
          }
          for (const { a, t, token } of issued) {
            if (t.delegation === undefined) continue;
            const now = {
              ...t,
              delegation: { ...t.delegation, caps: policies.get(t.identity)!.caps },
            };
            // A policy left with nothing of the token's scope: the token holds nothing.
            const scope = [...(t.scope ?? [])].filter((c) => now.delegation.caps.has(c));
            if (t.scope !== undefined && scope.length === 0) continue;
            count('asked after a policy change');
            await askAll(a, now, token, 'after the policy changed');
          }
        },
      ),
      // Each run builds a world in the database: shrinking would rebuild many more.
      { numRuns: WORLDS, seed: SEED, endOnFailure: true, includeErrorInReport: true },
    );
    const seen = Object.fromEntries([...outcomes].sort());
    t.log(JSON.stringify(seen));
    t.log(`wrong models caught: ${JSON.stringify(Object.fromEntries(caught))}`);
    // The comparisons are not idle: the wrong models disagree with a real answer.
    for (const name of Object.keys(WRONG))
      t.true(caught.has(name), `the model ${name} was never caught`);
    for (const key of [
      'exchange invalid_grant',
      'exchange invalid_scope',
      'exchange issued delegated',
      'exchange issued scoped',
      'asked after a policy change',
    ])
      t.true(
        Object.keys(seen).some((k) => k.startsWith(key)),
        `no ${key} in ${JSON.stringify(seen)}`,
      );
    for (const key of [
      'can true',
      'can false',
      'door rest true',
      'door rest false',
      'door grpc true',
      'door grpc false',
      'check rest {"allowed":t',
      'check rest {"allowed":f',
      'check rest "not found"',
      'check grpc {"allowed":t',
      'check grpc {"allowed":f',
      'check grpc "not found"',
    ])
      t.true((outcomes.get(key) ?? 0) > 0, `no ${key} in ${JSON.stringify(seen)}`);
  },
);
