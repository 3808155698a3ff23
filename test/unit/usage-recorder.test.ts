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

test('after a write, uses within the resolution are not noted again; the first one past it is', (t) => {
  let now = 1_000_000;
  const r = new UsageRecorder(() => now, 60_000);
  r.bindingUsed('b');
  r.identityUsed('i');
  const first = r.drain();
  r.written(first);
  // A thousand decisions in the next minute: nothing to write.
  for (let i = 0; i < 1_000; i++) {
    now += 59;
    r.bindingUsed('b');
    r.grantsUsed([{ bindingUid: 'b' }]);
    r.identityUsed('i');
  }
  t.true(now - 1_000_000 < 60_000);
  t.false(r.pending, 'within a minute of the write');
  now = 1_000_000 + 60_000;
  r.bindingUsed('b');
  t.deepEqual([...r.drain().bindings], [['b', now]]);
  t.is(first.resolutionMs, 60_000, 'the store is told the same resolution');
});

test('a batch not written (a failed flush) suppresses nothing: its uses are kept', (t) => {
  let now = 5_000;
  const r = new UsageRecorder(() => now, 60_000);
  r.bindingUsed('b');
  const batch = r.drain();
  r.restore(batch); // the write failed
  now += 10;
  r.bindingUsed('b');
  t.deepEqual([...r.drain().bindings], [['b', 5_010]]);
});

test('every uid written is noted again once the resolution has passed', (t) => {
  let now = 0;
  const r = new UsageRecorder(() => now, 1_000);
  for (let i = 0; i < 100; i++) r.bindingUsed(`b${i}`);
  r.written(r.drain());
  now = 1_000;
  r.bindingUsed('x');
  r.written(r.drain());
  // b0…b99 were written at 0: past the resolution at 1000, so noted again at once.
  r.bindingUsed('b1');
  t.deepEqual([...r.drain().bindings.keys()], ['b1']);
});

test('a question about another principal records no use; a decision on its own request does', async (t) => {
  const grant: Grant = {
    scope: G,
    capabilities: caps('groups.list'),
    bindings: [{ uid: 'held', capabilities: caps('groups.list') }],
  };
  const r = new UsageRecorder();
  const authz = new Authorizer({ grantsOf: () => Promise.resolve([grant]) }, () => 10, r);
  const holder = { kind: 'identity', uid: `${G}/fedcba9876543210` } as const;
  t.true(await authz.questions.can(holder, 'groups.list', G));
  t.deepEqual(await authz.questions.visibility({ ...holder }, 'groups.list'), {
    kind: 'scopes',
    scopes: [G],
  });
  t.false(r.pending, 'asked about: no use');
  t.true(await authz.can({ ...holder }, 'groups.list', G));
  t.deepEqual([...r.drain().bindings.keys()], ['held']);
});

test('a window is whole days from 1 to 365, 90 by default', (t) => {
  t.is(windowDays(undefined), 90);
  t.is(windowDays('30d'), 30);
  t.is(windowDays('365'), 365);
  for (const bad of ['0d', '366d', '1w', 'd', '-1d', '1.5d'])
    t.throws(() => windowDays(bad), undefined, bad);
});
