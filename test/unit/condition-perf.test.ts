import { celEnv, CelScalar, mapType, parse } from '@bufbuild/cel';
import test from 'ava';
import { Authorizer, type ConditionDeps, type Grant } from '../../src/auth/authorizer.js';
import type { Capability } from '../../src/auth/capabilities.js';
import { compileCondition, compileStats } from '../../src/auth/condition-compile.js';
import { foldLiterals } from '../../src/auth/condition-fold.js';
import type { ConditionInput } from '../../src/auth/condition-types.js';
import type { Principal } from '../../src/auth/principal.js';
import { testCondition } from '../../src/resources/conditions/condition-tester.js';

/**
 * What keeps a conditional decision cheap, each without changing a verdict: literal
 * conversions folded at compile time, the group looked up only for an expression that may
 * read it, the shown values computed only when asked, and the tester's expressions kept
 * out of the compiled cache the authorizer shares.
 */
const ORG = 'a'.repeat(40);
const PAY = `${ORG}/${'1'.repeat(16)}`;
const T = Date.parse('2026-06-01T10:00:00Z');
const caps = new Set<Capability>(['groups.list']);
const rest = (): Principal => ({ kind: 'identity', uid: 'i', via: { door: 'rest' } });
const ctx = { resource: { type: 'iam.arbor.dev/Group', name: 'payments' } };

const input = (time: number): ConditionInput => ({
  time,
  capability: 'groups.list',
  group: { uid: PAY, path: 'acme/payments' },
  resource: { type: 'iam.arbor.dev/Group', name: 'payments' },
  claims: new Map<string, unknown>([['env', 'prod']]),
});

const ENV_FOR_TEST = celEnv({
  variables: { request: mapType(CelScalar.STRING, CelScalar.DYN) },
});

/** An authorizer over one conditional grant, counting the group look-ups. */
function world(expression: string) {
  const lookups: string[] = [];
  const logged: Parameters<ConditionDeps['log']>[0][] = [];
  const grant: Grant = {
    scope: ORG,
    capabilities: caps,
    bindings: [{ uid: `${ORG}/${'b'.repeat(16)}`, capabilities: caps }],
    condition: { bindingUid: `${ORG}/${'b'.repeat(16)}`, compiled: compileCondition(expression) },
  };
  const deps: ConditionDeps = {
    groupOf: (uid) => {
      lookups.push(uid);
      return Promise.resolve(uid === PAY ? { uid, path: 'acme/payments' } : undefined);
    },
    log: (f) => logged.push(f),
  };
  const authz = new Authorizer(
    { grantsOf: () => Promise.resolve([grant]) },
    () => T,
    undefined,
    deps,
  );
  return { authz, lookups, logged };
}

test('folded timestamp and duration literals decide as CEL converts them, at the edges', (t) => {
  const c = compileCondition(
    'request.time >= timestamp("2026-06-01T09:00:00Z") + duration("3600s") && ' +
      'request.time < timestamp("2026-06-01T11:00:00.000000001Z")',
  );
  const at = (iso: string) => c.evaluate(input(Date.parse(iso)), { values: false }).result;
  t.false(at('2026-06-01T09:59:59.999Z'), 'before 09:00 + 1h');
  t.true(at('2026-06-01T10:00:00Z'), 'at 09:00 + 1h (inclusive)');
  t.true(at('2026-06-01T11:00:00Z'), 'a nanosecond before the end');
  t.false(at('2026-06-01T11:00:00.001Z'), 'after the end');
  // The same answers the second time: a folded value is not consumed by an evaluation.
  t.true(at('2026-06-01T10:00:00Z'));
});

test('a literal that does not convert is not folded: it errs at evaluation with its position', (t) => {
  const c = compileCondition('request.time < timestamp("not a time")');
  const r = c.evaluate(input(T));
  t.false(r.result);
  t.regex(r.error ?? '', /at position 15/);
  const d = compileCondition('request.time < timestamp("2026-01-01T00:00:00Z") + duration("1x")');
  t.regex(d.evaluate(input(T)).error ?? '', /at position \d+/);
  t.false(d.evaluate(input(T)).result);
});

test('a folded constant cannot be named by an expression', (t) => {
  t.throws(() => compileCondition('__arbor_k0 == __arbor_k0'), { message: /undeclared/ });
});

test('the shown values are computed only when asked; the result is the same', (t) => {
  const c = compileCondition(
    'token.claims.env == "prod" && request.time > timestamp("2026-01-01T00:00:00Z")',
  );
  const shown = c.evaluate(input(T));
  const decided = c.evaluate(input(T), { values: false });
  t.true(shown.result);
  t.is(decided.result, shown.result);
  t.deepEqual(decided.values, {});
  t.deepEqual(shown.values, {
    'request.time': '2026-06-01T10:00:00.000Z',
    'token.claims': { env: 'prod' },
  });
});

test('readsGroup: true wherever the expression may read the group, false only where it cannot', (t) => {
  const reads = (e: string) => compileCondition(e).readsGroup;
  t.true(reads('resource.group.path == "acme"'));
  t.true(reads('resource.group.uid == ""'));
  t.true(reads('has(resource.group)'));
  t.true(reads('resource.type == "x" || resource.group.path.startsWith("acme/")'));
  t.true(reads('request.time < timestamp("2030-01-01T00:00:00Z") && resource.group.path != ""'));
  t.false(reads('request.time < timestamp("2030-01-01T00:00:00Z")'));
  t.false(reads('resource.type == "iam.arbor.dev/Group" && resource.name != ""'));
  t.false(reads('token.claims.env == "prod"'));
  t.false(reads('request.capability == "groups.list"'));
});

test('a decision looks the group up only for an expression that reads it, once', async (t) => {
  const time = world('request.time >= timestamp("2026-06-01T09:00:00Z")');
  t.true(await time.authz.can(rest(), 'groups.list', PAY, ctx));
  t.true((await time.authz.heldUntil(rest(), 'groups.list', PAY, ctx)) !== undefined);
  t.deepEqual(time.lookups, [], 'a time window reads no group');

  const path = world('resource.group.path.startsWith("acme/pay")');
  t.true(await path.authz.can(rest(), 'groups.list', PAY, ctx));
  t.deepEqual(path.lookups, [PAY], 'one look-up for the decision');
  // A resource with no group: the condition that reads it errs, denies, and is logged.
  const other = `${ORG}/${'9'.repeat(16)}`;
  t.false(await path.authz.can(rest(), 'groups.list', other, ctx));
  t.is(path.logged.length, 1);
  t.regex(path.logged[0]?.error ?? '', /no group/);
});

test('explain shows the values, and reads the group only when the expression does', async (t) => {
  const { authz, lookups } = world('request.time >= timestamp("2026-06-01T09:00:00Z")');
  const r = await authz.explain(
    'b',
    'request.time >= timestamp("2026-06-01T09:00:00Z")',
    'groups.list',
    PAY,
  );
  t.true(r.result);
  t.deepEqual(r.values, { 'request.time': '2026-06-01T10:00:00.000Z' });
  t.deepEqual(lookups, []);
  const g = await authz.explain('b', 'resource.group.path == "acme/payments"', 'groups.list', PAY);
  t.true(g.result);
  t.deepEqual(g.values, { 'resource.group.path': 'acme/payments' });
  t.deepEqual(lookups, [PAY]);
});

test('the tester compiles without remembering: many distinct expressions do not evict a binding’s', (t) => {
  const binding =
    'resource.group.path.startsWith("acme/") && request.time > timestamp("2026-01-01T00:00:00Z")';
  const compiled = compileCondition(binding);
  t.is(compileCondition(binding), compiled, 'remembered: the same plan');
  const before = compileStats.compiled;
  // More distinct texts than the cache holds (4,096): remembered, they would clear it.
  const n = 5_000;
  for (let i = 0; i < n; i++)
    testCondition(rest(), { expression: `request.capability == "c${i}"` }, () => T);
  t.is(
    compileStats.compiled - before,
    n,
    'each tester expression compiled, none answered from the cache',
  );
  t.is(compileCondition(binding), compiled, 'the binding’s plan is still the one remembered');
  t.is(compileStats.compiled - before, n, 'and was not compiled again');
  // A tester expression is compiled again each time it is sent (it was never kept).
  testCondition(rest(), { expression: 'request.capability == "c0"' }, () => T);
  t.is(compileStats.compiled - before, n + 1);
});

test('what remembers still remembers: a compiled expression is kept by default', (t) => {
  const e = `request.capability == "${'k'.repeat(8)}"`;
  const before = compileStats.compiled;
  const a = compileCondition(e);
  t.is(compileCondition(e), a);
  t.is(compileStats.compiled - before, 1);
  const u = compileCondition('request.capability == "unremembered"', { remember: false });
  t.not(compileCondition('request.capability == "unremembered"', { remember: false }), u);
});

test('foldLiterals replaces each convertible literal call by a constant, once, and only those', (t) => {
  const p = parse(
    'request.time < timestamp("2030-01-01T00:00:00Z") + duration("60s") && ' +
      'request.time > timestamp("bad") && string(request.time) != "x"',
  );
  const constants = foldLiterals(ENV_FOR_TEST, p.expr!);
  t.is(Object.keys(constants).length, 2, 'the two that convert; "bad" stays a call');
  const text = JSON.stringify(p.expr, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  t.is((text.match(/"function":"timestamp"/g) ?? []).length, 1, 'only the bad literal is a call');
  t.notRegex(text, /"function":"duration"/);
  t.is((text.match(/__arbor_k\d/g) ?? []).length, 2);
});
