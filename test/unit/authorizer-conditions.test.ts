import test from 'ava';
import { Authorizer, grantsAt, type ConditionDeps, type Grant } from '../../src/auth/authorizer.js';
import type { Capability } from '../../src/auth/capabilities.js';
import { compileCondition } from '../../src/auth/condition.js';
import type { Principal } from '../../src/auth/principal.js';

/**
 * The authorizer's conditional grants: decided only given a request context, by their
 * condition; skipped (fail closed) by every decision made without one; an evaluation error
 * denies and is logged with the binding's uid and the position.
 */
const ORG = 'a'.repeat(40);
const PAY = `${ORG}/${'1'.repeat(16)}`;
const WEB = `${ORG}/${'2'.repeat(16)}`;
const T = Date.parse('2026-06-01T10:00:00Z');
const caps = new Set<Capability>(['groups.list']);

function world(expression: string) {
  const logged: Parameters<ConditionDeps['log']>[0][] = [];
  const grant: Grant = {
    scope: ORG,
    capabilities: caps,
    bindings: [{ uid: `${ORG}/${'b'.repeat(16)}`, capabilities: caps }],
    condition: { bindingUid: `${ORG}/${'b'.repeat(16)}`, compiled: compileCondition(expression) },
  };
  const deps: ConditionDeps = {
    groupOf: (uid) =>
      Promise.resolve(
        uid === PAY
          ? { uid, path: 'acme/payments' }
          : { uid, path: uid === WEB ? 'acme/web' : 'acme' },
      ),
    log: (f) => logged.push(f),
  };
  const authz = new Authorizer(
    { grantsOf: () => Promise.resolve([grant]) },
    () => T,
    undefined,
    deps,
  );
  return { authz, grant, logged };
}

const rest = (): Principal => ({ kind: 'identity', uid: 'i', via: { door: 'rest' } });
const none = (): Principal => ({ kind: 'identity', uid: 'i' });
const ctx = { resource: { type: 'iam.arbor.dev/Group', name: '' } };

test('a conditional grant decides by its condition given a context, and not at all without', async (t) => {
  const { authz, grant } = world('resource.group.path.startsWith("acme/payments")');
  t.true(await authz.can(rest(), 'groups.list', PAY, ctx));
  t.false(await authz.can(rest(), 'groups.list', WEB, ctx));
  t.false(await authz.can(rest(), 'groups.list', PAY), 'no context: not granted');
  t.is(await authz.heldUntil(rest(), 'groups.list', PAY), undefined, 'signed decisions: none');
  t.deepEqual(await authz.visibility(rest(), 'groups.list'), { kind: 'scopes', scopes: [] });
  t.false(grantsAt(grant, 'groups.list', PAY, T), 'grantsAt (simulation) never grants by one');
  await t.notThrowsAsync(authz.require(rest(), 'groups.list', PAY, 'groups.list', 'G'));
  await t.throwsAsync(authz.require(none(), 'groups.list', PAY, 'groups.list', 'G'), {
    message: /not found/i,
  });
});

test('the request time decides a time-window condition', async (t) => {
  const { authz } = world('request.time < timestamp("2026-06-01T09:00:00Z")');
  t.false(await authz.can(rest(), 'groups.list', PAY, ctx), '10:00 is after 09:00');
  const { authz: later } = world('request.time >= timestamp("2026-06-01T09:00:00Z")');
  t.true(await later.can(rest(), 'groups.list', PAY, ctx));
});

test('an evaluation error denies and is logged with the binding uid and position', async (t) => {
  const { authz, logged } = world('int(resource.group.path) > 0');
  t.false(await authz.can(rest(), 'groups.list', PAY, ctx));
  t.is(logged.length, 1);
  t.is(logged[0]?.bindingUid, `${ORG}/${'b'.repeat(16)}`);
  t.regex(logged[0]?.error ?? '', /at position 0/);
});

test('a capability the role lacks is not granted, whatever the condition', async (t) => {
  const { authz } = world('true');
  t.false(await authz.can(rest(), 'groups.delete', PAY, ctx));
});
