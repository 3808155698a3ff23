import test from 'ava';
import { Authorizer, type Grant } from '../../src/auth/authorizer.js';
import { CachedGrantSource } from '../../src/auth/cached-grant-source.js';
import type { Principal } from '../../src/auth/principal.js';

const ORG = 'a'.repeat(40);
const T = 1_000_000;

/**
 * One identity bound at ORG with groups.list from T (a scheduled grant), behind the
 * one-second grant cache; mirrors authorizer-expiry.test.ts for the window's other end.
 */
function setup() {
  let now = T - 500;
  let reads = 0;
  const grants: Grant[] = [
    { scope: ORG, capabilities: new Set(['groups.list']), startsAt: T, expiresAt: T + 100 },
  ];
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
  return { authz, at: (t: number) => (now = t), reads: () => reads };
}

const p = (): Principal => ({ kind: 'identity', uid: `${ORG}/00000000000000aa` });

test('authorizer: a grant remembered before its start grants from its start, not before', async (t) => {
  const { authz, at, reads } = setup();
  t.false(await authz.can(p(), 'groups.list', ORG));
  t.deepEqual(await authz.visibility(p(), 'groups.list'), { kind: 'scopes', scopes: [] });
  t.is(await authz.heldUntil(p(), 'groups.list', ORG), undefined, 'nothing held before it');
  at(T - 1);
  t.false(await authz.can(p(), 'groups.list', ORG));
  at(T);
  // The cache (read at T - 500) is still fresh: the remembered grant starts on its own.
  t.true(await authz.can(p(), 'groups.list', `${ORG}/0000000000000001`));
  t.deepEqual(await authz.visibility(p(), 'groups.list'), { kind: 'scopes', scopes: [ORG] });
  t.is(await authz.heldUntil(p(), 'groups.list', ORG), T + 100);
  at(T + 100);
  t.false(await authz.can(p(), 'groups.list', ORG), 'and ends at its expiry');
  t.is(reads(), 1);
});
