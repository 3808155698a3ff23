import test from 'ava';
import { systemPrincipal } from '../../src/auth/principal.js';
import { isRpcError } from '../../src/core/rpc-error.js';
import { ResourceExpired } from '../../src/reconciler/kind-sync.js';
import { RoleBindingReconciler } from '../../src/reconciler/rolebinding-reconciler.js';
import type { ArborObject, RoleBindingSpec } from '../../src/reconciler/resources.js';
import { builtinRole } from '../../src/resources/roles/builtin-roles.js';
import { createGroup } from '../helpers/fixtures.js';
import { createIdentity } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
test.before(async () => {
  s = await startServer();
});
test.after.always(async () => {
  await s?.close();
});

const refs = {
  uidOf: () => {
    throw new Error('no references in this test');
  },
  peek: () => undefined,
};

test('RoleBinding CRD: expireTime reaches the binding at create and is never changed', async (t) => {
  const org = await createGroup(s.admin, 'crd-expiry');
  const identityUid = await createIdentity(s.admin, org, 'crd-identity');
  const r = new RoleBindingReconciler(s.arbor.services.roleBindings, s.arbor.services.roles);
  const p = systemPrincipal('reconciler');
  const expireTime = new Date(Date.now() + 3_600_000).toISOString();
  const obj: ArborObject<RoleBindingSpec> = {
    metadata: { name: 'rb', namespace: 'ns' },
    spec: { groupUid: org, identityUid, roleUid: builtinRole('viewer').uid, expireTime },
  };
  const created = await r.sync(obj, refs, p);
  t.is(created.action, 'created');
  const binding = await s.arbor.services.roleBindings.get(p, created.uid);
  t.is(binding.expireTime?.toISOString(), expireTime);
  const again = await r.sync({ ...obj, status: { uid: created.uid } } as typeof obj, refs, p);
  t.is(again.action, 'unchanged');
  const later = new Date(Date.now() + 7_200_000).toISOString();
  const err = await t.throwsAsync(
    r.sync(
      {
        ...obj,
        spec: { ...obj.spec, expireTime: later },
        status: { uid: created.uid },
      } as typeof obj,
      refs,
      p,
    ),
  );
  t.true(isRpcError(err) && err.code === 3 && err.message.includes('spec.expireTime'));
});

test('RoleBinding CRD: a binding the sweeper removed after its expiry is not created again', async (t) => {
  const org = await createGroup(s.admin, 'crd-swept');
  const identityUid = await createIdentity(s.admin, org, 'crd-swept-identity');
  const p = systemPrincipal('reconciler');
  let now = Date.now();
  const r = new RoleBindingReconciler(
    s.arbor.services.roleBindings,
    s.arbor.services.roles,
    () => now,
  );
  const expireTime = new Date(now + 60_000).toISOString();
  const obj: ArborObject<RoleBindingSpec> = {
    metadata: { name: 'rb-swept', namespace: 'ns' },
    spec: { groupUid: org, identityUid, roleUid: builtinRole('viewer').uid, expireTime },
  };
  const created = await r.sync(obj, refs, p);
  const synced = { ...obj, status: { uid: created.uid } } as typeof obj;
  const bindingsOf = async () =>
    (await s.admin.get(`/iam/v2beta1/roleBindings?identity=${identityUid}`)).body.roleBindings
      .length as number;

  // Past its expiry, still there (listed as expired): refused as Expired, nothing written.
  now += 120_000;
  const stillThere = await t.throwsAsync(r.sync(synced, refs, p));
  t.true(stillThere instanceof ResourceExpired);
  t.regex(stillThere!.message, /grants nothing/);

  // The sweeper removes it (as it would after the retention period) ...
  t.is((await s.admin.delete(`/iam/v2beta1/roleBindings/${created.uid}`)).status, 200);
  // ... and the next resync does not make it again.
  const removed = await t.throwsAsync(r.sync(synced, refs, p));
  t.true(removed instanceof ResourceExpired);
  t.regex(removed!.message, /was removed; it is not created again/);
  t.is(await bindingsOf(), 0);

  // A later expireTime is a new wish: it binds again.
  const later = new Date(now + 3_600_000).toISOString();
  const again = await r.sync({ ...synced, spec: { ...obj.spec, expireTime: later } }, refs, p);
  t.is(again.action, 'recreated');
  t.is(await bindingsOf(), 1);
});
