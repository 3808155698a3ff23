import test from 'ava';
import { Authorizer, type Grant } from '../../src/auth/authorizer.js';
import type { Capability } from '../../src/auth/capabilities.js';
import { UsageRecorder } from '../../src/auth/usage-recorder.js';
import { windowDays } from '../../src/resources/usage/unused-access-service.js';

const G = 'a'.repeat(40);
const caps = (...c: string[]) => new Set(c as Capability[]);

test('the recorder keeps the latest use per uid, and a drain empties it', (t) => {
  const r = new UsageRecorder(() => 1_000);
  r.bindingUsed('b1', 5);
  r.bindingUsed('b1', 3);
  r.grantsUsed([{ bindingUid: 'b2' }, { bindingUid: 'b1' }]);
  r.identityUsed('i1', 7);
  t.true(r.pending);
  const batch = r.drain();
  t.deepEqual(
    [...batch.bindings],
    [
      ['b1', 1_000],
      ['b2', 1_000],
    ],
  );
  t.deepEqual([...batch.identities], [['i1', 7]]);
  t.false(r.pending);
  // A batch put back after a failed write: a later use of the same uid wins.
  r.bindingUsed('b2', 2_000);
  r.restore(batch);
  t.deepEqual([...r.drain().bindings].sort(), [
    ['b1', 1_000],
    ['b2', 2_000],
  ]);
});

test('a decision records every binding whose own role holds the capability, and only those', async (t) => {
  const grant: Grant = {
    scope: G,
    capabilities: caps('groups.list', 'groups.delete'),
    bindings: [
      { uid: 'viewer', capabilities: caps('groups.list') },
      { uid: 'deleter', capabilities: caps('groups.list', 'groups.delete') },
    ],
  };
  const other: Grant = {
    scope: `${G}/0123456789abcdef`,
    capabilities: caps('groups.list'),
    bindings: [{ uid: 'below', capabilities: caps('groups.list') }],
  };
  const expired: Grant = {
    ...other,
    expiresAt: 1,
    bindings: [{ uid: 'gone', capabilities: caps('groups.list') }],
  };
  const r = new UsageRecorder();
  const authz = new Authorizer(
    { grantsOf: () => Promise.resolve([grant, other, expired]) },
    () => 10,
    r,
  );
  const p = { kind: 'identity', uid: `${G}/fedcba9876543210` } as const;
  t.true(await authz.can(p, 'groups.list', G));
  t.deepEqual([...r.drain().bindings.keys()].sort(), ['deleter', 'viewer']);
  t.true(await authz.can({ ...p }, 'groups.delete', `${G}/0123456789abcdef`));
  t.deepEqual([...r.drain().bindings.keys()], ['deleter']);
  t.false(await authz.can({ ...p }, 'groups.update', G));
  t.false(r.pending, 'a denial records nothing');
  await authz.visibility({ ...p }, 'groups.list');
  t.deepEqual([...r.drain().bindings.keys()].sort(), ['below', 'deleter', 'viewer']);
});

test('a window is whole days from 1 to 365, 90 by default', (t) => {
  t.is(windowDays(undefined), 90);
  t.is(windowDays('30d'), 30);
  t.is(windowDays('365'), 365);
  for (const bad of ['0d', '366d', '1w', 'd', '-1d', '1.5d'])
    t.throws(() => windowDays(bad), undefined, bad);
});
