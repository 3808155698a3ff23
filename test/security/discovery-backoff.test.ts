import test from 'ava';
import { RemoteKeySets } from '../../src/auth/remote-key-sets.js';
import { isRpcError } from '../../src/core/rpc-error.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';

// An issuer that fails is not asked again on every exchange. Each
// failed fetch backs that issuer off (doubling, bounded); a success forgets the failures.
test('discovery: a failing issuer is backed off per issuer, and a success resets it', async (t) => {
  const down = await TestIssuer.start();
  const other = await TestIssuer.start();
  t.teardown(() => Promise.all([down.stop(), other.stop()]));
  down.up = false;
  let now = 1_000_000;
  const keys = new RemoteKeySets({ allowInsecure: true, now: () => now });
  const unavailable = async (issuer: string) => {
    const e = await t.throwsAsync(keys.resolver(issuer));
    t.true(isRpcError(e) && e.code === 14, String(e));
  };

  for (let i = 0; i < 5; i++) await unavailable(down.url);
  t.is(down.requests, 1, 'five exchanges at once ask a failing issuer once');
  // Another issuer is not held back by this one's failures.
  await keys.resolver(other.url);
  t.is(other.requests, 2);

  now += 1_000;
  await unavailable(down.url);
  t.is(down.requests, 2, 'asked again once the first backoff has passed');
  now += 1_000;
  await unavailable(down.url);
  t.is(down.requests, 2, 'the second backoff is twice as long');
  now += 1_000;
  await unavailable(down.url);
  t.is(down.requests, 3);

  down.up = true;
  now += 4_000;
  await keys.resolver(down.url);
  t.is(down.requests, 5, 'discovery and keys once it answers again');
  // The success reset the backoff: the next failure waits the first interval again.
  down.up = false;
  now += 60 * 60 * 1000 + 1;
  await keys.resolver(down.url, true); // stale keys still verify while it is down
  t.is(down.requests, 6);
});
