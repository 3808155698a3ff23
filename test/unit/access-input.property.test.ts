import test from 'ava';
import fc from 'fast-check';
import { CAPABILITIES } from '../../src/auth/capabilities.js';
import { checkSchema, plainCheck } from '../../src/resources/access/access-input.js';
import { parseInput } from '../../src/resources/validate.js';

/**
 * The check's hot path reads a plain body without zod (access-input.ts `plainCheck`): it
 * must accept only what `parseInput(checkSchema, …)` accepts, and read it the same.
 */
const root = fc.stringMatching(/^[0-9a-f]{40}$/);
const goodUid = fc.oneof(
  root,
  fc.tuple(root, fc.stringMatching(/^[0-9a-f]{16}$/)).map(([r, c]) => `${r}/${c}`),
);
const bad = fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.constant(['x']));
/** Mostly well-formed, sometimes not: both paths are exercised. */
const mostly = <T>(good: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 6, arbitrary: good }, { weight: 1, arbitrary: bad });
const body = fc
  .record(
    {
      identityUid: mostly(goodUid),
      capability: mostly(fc.constantFrom(...CAPABILITIES)),
      groupUid: mostly(goodUid),
      extra: bad,
    },
    { requiredKeys: [] },
  )
  .map((b): Record<string, unknown> => b);

test('plain check: whatever it reads, the schema reads the same; what it passes over, only the schema judges', (t) => {
  let plain = 0;
  fc.assert(
    fc.property(body, (b) => {
      const fast = plainCheck(b);
      let schema: unknown;
      try {
        schema = parseInput(checkSchema, b);
      } catch {
        schema = undefined;
      }
      if (fast === undefined) return true;
      plain++;
      t.deepEqual(fast, schema);
      return true;
    }),
    { seed: 25, numRuns: 5_000 },
  );
  t.true(plain > 100, `${plain} bodies took the plain path`);
});
