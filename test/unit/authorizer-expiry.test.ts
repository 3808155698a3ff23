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

test('authorizer: heldUntil is the latest expiry among the live grants holding a capability', async (t) => {
  const child = `${ORG}/0000000000000001`;
  const grants: Grant[] = [
    { scope: ORG, capabilities: new Set(['repo.list']), expiresAt: T + 10 },
    { scope: child, capabilities: new Set(['repo.list']), expiresAt: T + 20 },
    { scope: child, capabilities: new Set(['repo.blobs.get']) },
    { scope: ORG, capabilities: new Set(['repo.blobs.get']), expiresAt: T - 1 },
  ];
  const authz = new Authorizer({ grantsOf: () => Promise.resolve(grants) }, () => T);
  t.is(await authz.heldUntil(p(), 'repo.list', ORG), T + 10);
  t.is(await authz.heldUntil(p(), 'repo.list', child), T + 20, 'two grants: the later');
  t.is(await authz.heldUntil(p(), 'repo.blobs.get', child), Infinity, 'one never expires');
  t.is(
    await authz.heldUntil(p(), 'repo.blobs.get', ORG),
    undefined,
    'an expired grant holds nothing',
  );
  t.is(await authz.heldUntil(p(), 'groups.list', ORG), undefined);
  t.is(await authz.heldUntil({ kind: 'admin' }, 'groups.list', ORG), Infinity);
});
