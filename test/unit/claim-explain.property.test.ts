import test from 'ava';
import fc from 'fast-check';
import { claimMatchAccepts } from '../../src/resources/identities/claim-match.js';
import {
  explainClaimMatch,
  MAX_SHOWN_VALUE,
  shown,
} from '../../src/resources/identities/claim-explain.js';
import type { ClaimMatch } from '../../src/resources/identities/identity.js';
import { explainLifetime } from '../../src/resources/sts/token-lifetime.js';
import { requireBoundedLifetime } from '../../src/resources/sts/security-token-service.js';

// Values drawn from a small pool, so that matches and mismatches both happen often.
const word = fc.constantFrom('a', 'b', 'ab', 'https://i.example', 'https://j.example', '');
const anyValue = fc.oneof(
  word,
  fc.integer(),
  fc.boolean(),
  fc.constant(undefined),
  fc.constant(null),
  fc.array(word, { maxLength: 3 }),
);
const claimName = fc.constantFrom('team', 'env', 'iss', 'sub', 'aud', '__proto__', 'toString');
const pattern = fc.constantFrom('a', 'a.*', '[ab]+', 'https://i\\.example', '(');
const claimMatch: fc.Arbitrary<ClaimMatch> = fc.record(
  {
    issuer: word,
    issuerPattern: pattern,
    subject: word,
    subjectPattern: pattern,
    audience: word,
    claims: fc.dictionary(claimName, word, { maxKeys: 3 }),
  },
  { requiredKeys: [] },
);
const claims = fc.dictionary(fc.oneof(claimName, fc.constantFrom('iss', 'sub', 'aud')), anyValue, {
  maxKeys: 6,
});

test('the explainer agrees with claimMatchAccepts on every claim match and claims', (t) => {
  fc.assert(
    fc.property(claimMatch, claims, (cm, c) => {
      const clauses = explainClaimMatch(cm, c);
      return clauses.every((x) => x.passed) === claimMatchAccepts(cm, c);
    }),
    { numRuns: 20_000, seed: 20261125 },
  );
  t.pass();
});

test('every clause is named: issuer, subject, audience, then one per further claim', (t) => {
  const names = explainClaimMatch(
    { issuer: 'https://i.example', subject: 's', claims: { team: 'a', env: 'b' } },
    {},
  ).map((c) => c.clause);
  t.deepEqual(names, ['issuer', 'subject', 'audience', 'claims.team', 'claims.env']);
});

test('shown values are cut to MAX_SHOWN_VALUE characters', (t) => {
  t.is(shown('x'.repeat(5000)).length, MAX_SHOWN_VALUE + 3); // two quotes and the ellipsis
  t.is(shown({ a: 'y'.repeat(5000) }).length, MAX_SHOWN_VALUE + 1);
  t.is(shown(undefined), 'nothing');
});

test('the lifetime clause passes exactly when the exchange accepts the lifetime', (t) => {
  const now = 1_800_000_000;
  const time = fc.oneof(
    fc.integer({ min: now - 200_000, max: now + 200_000 }),
    fc.constant(undefined),
  );
  fc.assert(
    fc.property(time, time, (exp, iat) => {
      const c: Record<string, unknown> = {};
      if (exp !== undefined) c.exp = exp;
      if (iat !== undefined) c.iat = iat;
      // What jose checks before the STS's own bound (30 s of skew).
      const joseOk = exp !== undefined && exp > now - 30;
      let boundOk = true;
      try {
        if (joseOk) requireBoundedLifetime(c, now * 1000);
      } catch {
        boundOk = false;
      }
      return explainLifetime(c, now * 1000).passed === (joseOk && boundOk);
    }),
    { numRuns: 5_000, seed: 20261125 },
  );
  t.pass();
});
