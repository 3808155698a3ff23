import test from 'ava';
import fc from 'fast-check';
import { compileCondition } from '../../src/auth/condition-compile.js';
import type { ConditionInput } from '../../src/auth/condition-types.js';

/**
 * A condition's results are remembered by their inputs (condition-memo.ts): the time only
 * as the side of each literal instant it is compared with. A remembered result must be the
 * one a fresh evaluation gives, at every instant and for every input; an expression that
 * reads the time any other way is never remembered (no `stableUntil`).
 */
const T = Date.parse('2026-06-01T10:00:00Z');
const input = (time: number, o: Partial<ConditionInput> = {}): ConditionInput => ({
  time,
  capability: 'groups.list',
  group: { uid: 'u', path: 'acme/payments' },
  resource: { type: 'registry.arbor.dev/Repo', name: 'images/app' },
  claims: new Map<string, unknown>([['ref', 'refs/heads/main']]),
  ...o,
});
/** A compiled condition no cache shares: its memo starts empty. */
const fresh = (e: string) => compileCondition(e, { remember: false });

test('around each literal instant, the remembered result is the fresh one, to the millisecond', (t) => {
  const e =
    'request.time >= timestamp("2026-06-01T10:00:00Z") && ' +
    'request.time < timestamp("2026-06-01T10:00:00.0005Z") || ' +
    'request.time == timestamp("2026-06-01T10:00:01Z")';
  const memo = fresh(e);
  t.truthy(memo.stableUntil, 'compared with literals only: remembered');
  for (let ms = T - 3; ms <= T + 1003; ms++) {
    // The memo is asked twice, once it knows the answer; the other never remembers.
    memo.evaluate(input(ms));
    t.is(memo.evaluate(input(ms)).result, fresh(e).evaluate(input(ms)).result, `at ${ms}`);
  }
  t.true(memo.evaluate(input(T)).result, 'the sub-millisecond end lies past T');
  t.false(memo.evaluate(input(T + 1)).result);
  t.true(memo.evaluate(input(T + 1000)).result, 'met exactly');
  t.false(memo.evaluate(input(T + 1001)).result);
});

test('stableUntil names the next instant the time alone may change the result', (t) => {
  const c = fresh(
    'request.time < timestamp("2026-06-01T10:00:00Z") || ' +
      'timestamp("2026-06-01T11:00:00.5Z") <= request.time',
  );
  const later = T + 3_600_500;
  t.is(c.stableUntil!(T - 10), T, 'before, at, after: each a side');
  t.is(c.stableUntil!(T), T + 1);
  t.is(c.stableUntil!(T + 1), later);
  t.is(c.stableUntil!(later), later + 1);
  t.is(c.stableUntil!(later + 1), Number.POSITIVE_INFINITY);
  const subMs = fresh('request.time < timestamp("2026-06-01T10:00:00.0005Z")');
  t.is(subMs.stableUntil!(T - 1), T + 1, 'never met exactly: at its whole ms it lies ahead');
  t.is(fresh('resource.name == "x"').stableUntil!(T), Number.POSITIVE_INFINITY, 'no time read');
});

test('an expression reading the time other than against a literal is never remembered', (t) => {
  for (const e of [
    'request.time.getHours() < 12',
    'request.time + duration("1h") < timestamp("2026-06-01T11:00:00Z")',
    'string(request.time) != ""',
    'request.time < request.time',
  ])
    t.is(fresh(e).stableUntil, undefined, e);
});

test('every input takes part in the key: no two inputs share a result', (t) => {
  const c = fresh(
    'resource.name.startsWith("images/") && token.claims.ref == "refs/heads/main" && ' +
      'resource.group.path.startsWith("acme/") && request.capability == "groups.list"',
  );
  t.true(c.evaluate(input(T)).result);
  const other: Partial<ConditionInput>[] = [
    { resource: { type: 'registry.arbor.dev/Repo', name: 'other/app' } },
    { claims: new Map<string, unknown>([['ref', 'refs/heads/dev']]) },
    { group: { uid: 'u', path: 'globex/payments' } },
    { capability: 'groups.delete' },
  ];
  for (const o of other) t.false(c.evaluate(input(T, o)).result, JSON.stringify(o));
  t.true(c.evaluate(input(T)).result, 'and the first is still itself');
});

test('a separator inside a named resource cannot make one input stand for another', (t) => {
  const c = fresh('resource.type == "a" && resource.name == "b\\u0000c"');
  const attack = input(T, { resource: { type: 'a\u0000b', name: 'c' } });
  const real = input(T, { resource: { type: 'a', name: 'b\u0000c' } });
  t.false(c.evaluate(attack).result);
  t.true(c.evaluate(real).result);
  t.false(c.evaluate(attack).result);
});

test('property: remembered results agree with fresh evaluation on random inputs and times', (t) => {
  const e =
    '(request.time < timestamp("2026-06-01T10:00:00Z") || resource.name.startsWith("images/")) ' +
    '&& token.claims.env != "dev"';
  const memo = fresh(e);
  fc.assert(
    fc.property(
      fc.integer({ min: T - 5, max: T + 5 }),
      fc.constantFrom('images/a', 'other/a', 'images/b'),
      fc.constantFrom('prod', 'dev'),
      (time, name, env) => {
        const i = input(time, {
          resource: { type: 'registry.arbor.dev/Repo', name },
          claims: new Map<string, unknown>([['env', env]]),
        });
        return memo.evaluate(i).result === fresh(e).evaluate(i).result;
      },
    ),
    { numRuns: 500 },
  );
  t.pass();
});
