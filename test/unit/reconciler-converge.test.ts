import test from 'ava';
import { Code } from '../../src/core/rpc-code.js';
import { invalidField, notFound, RpcError } from '../../src/core/rpc-error.js';
import { buildStatus, readyTransition, sameStatus } from '../../src/reconciler/conditions.js';
import { converge, type ConvergeOps } from '../../src/reconciler/kind-sync.js';
import { changedFields, stableJson } from '../../src/wire/manifest-spec.js';

interface Thing {
  uid: string;
  name: string;
}

/** An in-memory "service" whose calls are recorded. */
function fakeOps(
  store: Map<string, Thing>,
  want: { name: string },
  uid?: string,
  adoptUid?: string,
) {
  const calls: string[] = [];
  let n = 0;
  const ops: ConvergeOps<Thing> = {
    uid,
    adoptUid,
    get: (id) => {
      calls.push(`get ${id}`);
      const t = store.get(id);
      return t ? Promise.resolve(t) : Promise.reject(notFound('Thing', id));
    },
    create: () => {
      const t = { uid: `new-${++n}`, name: want.name };
      calls.push(`create ${t.uid}`);
      store.set(t.uid, t);
      return Promise.resolve(t);
    },
    uidOf: (t) => t.uid,
    diff: (t) => changedFields({ name: t.name }, want),
    update: (id, patch) => {
      calls.push(`update ${id} ${Object.keys(patch).join(',')}`);
      store.set(id, { ...store.get(id)!, ...(patch as { name: string }) });
      return Promise.resolve();
    },
  };
  return { ops, calls };
}

test('converge: creates when nothing is managed yet', async (t) => {
  const { ops, calls } = fakeOps(new Map(), { name: 'a' });
  t.deepEqual(await converge(ops), { uid: 'new-1', action: 'created' });
  t.deepEqual(calls, ['create new-1']);
});

test('converge: an object in sync is one read and no write', async (t) => {
  const store = new Map([['u1', { uid: 'u1', name: 'a' }]]);
  const { ops, calls } = fakeOps(store, { name: 'a' }, 'u1');
  t.deepEqual(await converge(ops), { uid: 'u1', action: 'unchanged' });
  t.deepEqual(calls, ['get u1']);
});

test('converge: updates only the fields that differ', async (t) => {
  const store = new Map([['u1', { uid: 'u1', name: 'old' }]]);
  const { ops, calls } = fakeOps(store, { name: 'new' }, 'u1');
  t.deepEqual(await converge(ops), { uid: 'u1', action: 'updated' });
  t.deepEqual(calls, ['get u1', 'update u1 name']);
});

test('converge: a managed resource deleted behind our back is recreated', async (t) => {
  const { ops, calls } = fakeOps(new Map(), { name: 'a' }, 'gone');
  t.deepEqual(await converge(ops), { uid: 'new-1', action: 'recreated' });
  t.deepEqual(calls, ['get gone', 'create new-1']);
});

test('converge: adopts by uid and fixes what differs; a missing adoptee is an error', async (t) => {
  const store = new Map([['u9', { uid: 'u9', name: 'theirs' }]]);
  const adopted = fakeOps(store, { name: 'ours' }, undefined, 'u9');
  t.deepEqual(await converge(adopted.ops), { uid: 'u9', action: 'adopted' });
  t.is(store.get('u9')!.name, 'ours');
  const missing = fakeOps(new Map(), { name: 'x' }, undefined, 'nope');
  const e = await t.throwsAsync(converge(missing.ops), { instanceOf: RpcError });
  t.is(e.code, Code.NOT_FOUND);
});

test('converge: a failing check stops before any write', async (t) => {
  const store = new Map([['u1', { uid: 'u1', name: 'old' }]]);
  const { ops, calls } = fakeOps(store, { name: 'new' }, 'u1');
  ops.check = () => {
    throw invalidField('spec.parentRef', 'cannot move');
  };
  await t.throwsAsync(converge(ops), { message: /cannot move/ });
  t.deepEqual(calls, ['get u1']);
});

test('changedFields: compares deeply, ignores key order and absent members', (t) => {
  t.is(changedFields({ cm: { a: 1, b: undefined } }, { cm: { a: 1 } }), undefined);
  t.is(changedFields({ cm: { b: 2, a: 1 } }, { cm: { a: 1, b: 2 } }), undefined);
  t.deepEqual(changedFields({ x: 'a', y: 'b' }, { x: 'a', y: 'c' }), { y: 'c' });
  t.is(stableJson({ b: [1, { d: null, c: 2 }], a: 'x' }), '{"a":"x","b":[1,{"c":2}]}');
});

const T0 = new Date('2026-01-01T00:00:00.000Z');
const T1 = new Date('2026-01-01T01:00:00.000Z');
const ok = { status: 'True', reason: 'Available', message: 'in sync' } as const;
const synced = { status: 'True', reason: 'ReconcileSuccess', message: '' } as const;

test('conditions: re-asserting the same state yields the same status (no write)', (t) => {
  const first = buildStatus(undefined, { uid: 'u', generation: 1, ready: ok, synced }, T0);
  const again = buildStatus(first, { uid: 'u', generation: 1, ready: ok, synced }, T1);
  t.true(sameStatus(first, again));
  t.is(first.conditions![0]!.lastTransitionTime, '2026-01-01T00:00:00Z');
});

test('conditions: lastTransitionTime moves only when the status flips', (t) => {
  const first = buildStatus(undefined, { uid: 'u', generation: 1, ready: ok, synced }, T0);
  const failing = { status: 'False', reason: 'ReconcileError', message: 'db down' } as const;
  const next = buildStatus(
    first,
    { uid: undefined, generation: 2, ready: 'keep', synced: failing },
    T1,
  );
  const [ready, sync] = next.conditions!;
  t.like(ready, {
    status: 'True',
    lastTransitionTime: '2026-01-01T00:00:00Z',
    observedGeneration: 1,
  });
  t.like(sync, {
    status: 'False',
    lastTransitionTime: '2026-01-01T01:00:00Z',
    observedGeneration: 2,
  });
  t.is(next.uid, 'u', 'a failure never forgets the uid');
  t.is(next.observedGeneration, 1, 'Ready still describes generation 1');
  t.false(sameStatus(first, next));
  t.is(readyTransition(first, next), undefined, 'Ready did not change');
});

test('conditions: a new object without a Ready verdict is Unknown, and a reason change is a transition', (t) => {
  const failing = { status: 'False', reason: 'ReconcileError', message: 'x' } as const;
  const s = buildStatus(
    undefined,
    { uid: undefined, generation: 1, ready: 'keep', synced: failing },
    T0,
  );
  t.like(s.conditions![0], { type: 'Ready', status: 'Unknown', reason: 'Pending' });
  const waiting = { status: 'False', reason: 'WaitingForReference', message: 'w' } as const;
  const invalid = { status: 'False', reason: 'InvalidSpec', message: 'i' } as const;
  const a = buildStatus(s, { uid: undefined, generation: 1, ready: waiting, synced: waiting }, T0);
  const b = buildStatus(a, { uid: undefined, generation: 1, ready: invalid, synced: invalid }, T1);
  t.like(readyTransition(a, b), { reason: 'InvalidSpec' });
});
