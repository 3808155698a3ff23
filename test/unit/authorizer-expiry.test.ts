import test from 'ava';
import { Authorizer, type Grant } from '../../src/auth/authorizer.js';
import { CachedGrantSource } from '../../src/auth/cached-grant-source.js';
import type { Principal } from '../../src/auth/principal.js';

const ORG = 'a'.repeat(40);
const T = 1_000_000;

/** One identity bound at ORG with groups.list until T, behind the one-second grant cache. */
function setup() {
  let now = T - 500;
  let reads = 0;
  const grants: Grant[] = [{ scope: ORG, capabilities: new Set(['groups.list']), expiresAt: T }];
  const source = new CachedGrantSource(
    {
      grantsOf: () => {
        reads++;
        return Promise.resolve(grants);
      },
    },
    1_000,
    10_000,
    () => now,
  );
  const authz = new Authorizer(source, () => now);
  return {
    authz,
    at: (t: number) => (now = t),
    reads: () => reads,
  };
}

const p = (): Principal => ({ kind: 'identity', uid: `${ORG}/00000000000000aa` });

test('authorizer: a remembered grant stops granting at its expiry, not when the cache lapses', async (t) => {
  const { authz, at, reads } = setup();
  t.true(await authz.can(p(), 'groups.list', ORG));
  at(T - 1);
  t.true(await authz.can(p(), 'groups.list', `${ORG}/0000000000000001`));
  at(T);
  // The cache (read at T - 500) is still fresh, yet the grant is void from T on.
  t.false(await authz.can(p(), 'groups.list', ORG));
  t.is(reads(), 1);
  t.deepEqual(await authz.visibility(p(), 'groups.list'), { kind: 'scopes', scopes: [] });
});

test('authorizer: within one request, the grant lapses at its expiry too', async (t) => {
  const { authz, at } = setup();
  const same = p();
  t.true(await authz.can(same, 'groups.list', ORG));
  at(T + 1);
  t.false(await authz.can(same, 'groups.list', ORG));
});
