import test from 'ava';
import { Code } from '../../src/core/rpc-code.js';
import { asRpcError } from '../../src/core/rpc-error.js';
import { startServer } from '../helpers/server.js';

/**
 * A person's identity is judged against their sign-in provider, read from the database. When
 * the database cannot answer, the claim tester (the STS's dry run) must fail as UNAVAILABLE,
 * as every other route does, and never say the token's issuer is the wrong one.
 */
test('sts: a database outage while finding a person’s provider is UNAVAILABLE, not a wrong issuer', async (t) => {
  const s = await startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true' });
  const iss = 'http://127.0.0.1:9/login';
  // A person's identity, as an organization IdP registers it: the provider is read by uid.
  const person = {
    claimMatch: { issuer: iss, subject: 'alice' },
    signInProvider: `${'a'.repeat(40)}/${'b'.repeat(16)}`,
  };
  const claims = { iss, sub: 'alice', aud: s.arbor.config.issuerUrl };

  // With the database up, an unknown provider is a verdict on the issuer clause.
  const judged = await s.arbor.sts.dryRun(person, claims);
  t.like(
    judged.find((c) => c.clause === 'issuer'),
    {
      passed: false,
      reason: "iss is not the issuer of this person's sign-in provider",
    },
  );

  // The database goes away: the dry run must fail, and a door answers the failure as the
  // contract says (UNAVAILABLE, or INTERNAL for a fault), not as a verdict on the token.
  await s.arbor.db.close();
  try {
    const e = await t.throwsAsync(s.arbor.sts.dryRun(person, claims));
    const quiet = { warn: () => undefined, error: () => undefined };
    const answered = asRpcError(e, () => quiet);
    t.true(
      answered.code === Code.UNAVAILABLE || answered.code === Code.INTERNAL,
      `answered ${answered.code}: ${answered.message}`,
    );
  } finally {
    await s.close().catch(() => undefined);
  }
});
