import test from 'ava';
import { ADMIN, withVia } from '../../src/auth/principal.js';
import { eventTypeOf } from '../../src/resources/audit/audit-event.js';
import { AuditLog } from '../../src/resources/audit/audit-log.js';
import { newEventId } from '../../src/resources/audit/event-id.js';
import { isPrivateAddress, sinkPolicyViolation } from '../../src/outbound/sink-address-policy.js';
import { toCloudEvent } from '../../src/resources/events/cloud-event.js';
import { backoffMs } from '../../src/resources/events/delivery-worker.js';
import { webhookConsent } from '../../src/resources/events/webhook-validation.js';
import { matchesEventType } from '../../src/resources/subscriptions/subscription.js';

test('event types: resource type and operation make a stable dotted name', (t) => {
  t.is(eventTypeOf('iam.arbor.dev/Group', 'create'), 'dev.arbor.iam.group.created.v1');
  t.is(eventTypeOf('iam.arbor.dev/RoleBinding', 'update'), 'dev.arbor.iam.role_binding.updated.v1');
  t.is(
    eventTypeOf('iam.arbor.dev/IdentityProvider', 'delete'),
    'dev.arbor.iam.identity_provider.deleted.v1',
  );
  t.is(eventTypeOf('registry.arbor.dev/Tag', 'create'), 'dev.arbor.registry.tag.created.v1');
  t.is(
    eventTypeOf('events.arbor.dev/Subscription', 'create'),
    'dev.arbor.events.subscription.created.v1',
  );
});

test('type filters: empty takes everything, exact names and * prefixes select', (t) => {
  const ty = 'dev.arbor.iam.group.created.v1';
  t.true(matchesEventType([], ty));
  t.true(matchesEventType([ty], ty));
  t.true(matchesEventType(['dev.arbor.iam.*'], ty));
  t.true(matchesEventType(['*'], ty));
  t.false(matchesEventType(['dev.arbor.registry.*', 'dev.arbor.iam.group.deleted.v1'], ty));
});

test('event ids: UUIDv7, and in creation order within one millisecond', (t) => {
  const ids = Array.from({ length: 5000 }, () => newEventId(1_700_000_000_000));
  for (const id of ids)
    t.regex(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.deepEqual([...ids].sort(), ids);
  t.is(new Set(ids).size, ids.length);
});

test('backoff: doubles per failure up to the ceiling, jittered within the upper half', (t) => {
  t.is(
    backoffMs(1, 1000, 60_000, () => 1),
    1000,
  );
  t.is(
    backoffMs(1, 1000, 60_000, () => 0),
    500,
  );
  t.is(
    backoffMs(4, 1000, 60_000, () => 1),
    8000,
  );
  t.is(
    backoffMs(40, 1000, 60_000, () => 1),
    60_000,
  );
  t.is(
    backoffMs(40, 1000, 60_000, () => 0),
    30_000,
  );
});

test('address policy: loopback, private, link-local and mapped addresses are refused', (t) => {
  for (const ip of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254']) {
    t.true(isPrivateAddress(ip), ip);
  }
  for (const ip of ['::1', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '100.64.0.1', '0.0.0.0']) {
    t.true(isPrivateAddress(ip), ip);
  }
  for (const ip of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '8.8.8.8']) {
    t.false(isPrivateAddress(ip), ip);
  }
  t.is(sinkPolicyViolation('https://hooks.example.com/x', false), undefined);
  t.regex(sinkPolicyViolation('http://hooks.example.com/x', false)!, /https/);
  t.regex(sinkPolicyViolation('https://[::1]:8443/x', false)!, /private|loopback/);
  t.is(sinkPolicyViolation('http://127.0.0.1:9/x', true), undefined);
});

test('audit records: the request context rides with the principal; secrets never recorded', (t) => {
  const log = new AuditLog(
    { append: () => Promise.resolve(), list: () => Promise.reject(new Error('unused')) },
    (_type, x) => x as Record<string, unknown>,
    () => new Date('2026-01-01T00:00:00Z'),
  );
  const p = withVia(ADMIN, { door: 'rest', requestId: 'r-1', credential: 'abcd' });
  const e = log.event(p, {
    type: 'iam.arbor.dev/IdentityProvider',
    operation: 'update',
    uid: `${'a'.repeat(40)}/${'b'.repeat(16)}`,
    before: { name: 'x', oidc: { clientId: 'c', clientSecret: 's3cret' }, updateTime: 1 },
    after: { name: 'y', oidc: { clientId: 'c', clientSecret: 'n3w' }, code: 'c0de', updateTime: 2 },
  });
  t.is(e.actor, 'admin');
  t.is(e.door, 'rest');
  t.is(e.requestId, 'r-1');
  t.is(e.credential, 'abcd');
  t.is(e.resourceParentUid, 'a'.repeat(40));
  t.deepEqual(e.changedFields, ['name']);
  t.false(JSON.stringify(e).includes('s3cret'));
  t.false(JSON.stringify(e).includes('n3w'));
  t.false(JSON.stringify(e).includes('c0de'));
});

test('cloud events: a revocation nobody asked for says why, and names what carried it', (t) => {
  const log = new AuditLog(
    { append: () => Promise.resolve(), list: () => Promise.reject(new Error('unused')) },
    (_type, x) => x as Record<string, unknown>,
  );
  const identity = `${'a'.repeat(40)}/${'b'.repeat(16)}`;
  const binding = `${'a'.repeat(40)}/${'c'.repeat(16)}`;
  const cascaded = log.event(ADMIN, {
    type: 'iam.arbor.dev/RoleBinding',
    operation: 'delete',
    uid: binding,
    before: { uid: binding, identity: { uid: identity, name: 'ci' } },
    cause: {
      reason: 'IDENTITY_DELETED',
      resourceType: 'iam.arbor.dev/Identity',
      resourceUid: identity,
    },
  });
  const ce = toCloudEvent(cascaded, 'https://arbor.example.com');
  t.is(ce.type, 'dev.arbor.iam.role_binding.deleted.v1');
  t.is(ce.arborreason, 'IDENTITY_DELETED');
  t.is(ce.arborcausesubject, identity);
  t.deepEqual(ce.data, { uid: binding, identity: { uid: identity } });
  const expired = log.event(ADMIN, {
    type: 'iam.arbor.dev/RoleBinding',
    operation: 'delete',
    uid: binding,
    before: { uid: binding },
    cause: { reason: 'EXPIRED' },
  });
  const swept = toCloudEvent(expired, 'https://arbor.example.com');
  t.is(swept.arborreason, 'EXPIRED');
  t.false('arborcausesubject' in swept);
  // A change someone asked for directly carries neither.
  const direct = toCloudEvent(
    log.event(ADMIN, { type: 'iam.arbor.dev/RoleBinding', operation: 'delete', uid: binding }),
    'https://arbor.example.com',
  );
  t.false('arborreason' in direct);
  t.false('arborcausesubject' in direct);
});

test('webhook consent: only WebHook-Allowed-Origin with our origin or * on a 2xx agrees', (t) => {
  const answer = (status: number, headers: Record<string, string | string[]>) =>
    webhookConsent({ status, headers }, 'arbor.example.com');
  t.deepEqual(answer(200, { 'webhook-allowed-origin': 'arbor.example.com' }), {
    agreed: true,
    allowedRate: null,
  });
  t.deepEqual(answer(204, { 'webhook-allowed-origin': '*', 'webhook-allowed-rate': '*' }), {
    agreed: true,
    allowedRate: null,
  });
  t.deepEqual(
    answer(200, { 'webhook-allowed-origin': 'ARBOR.example.com', 'webhook-allowed-rate': '60' }),
    {
      agreed: true,
      allowedRate: 60,
    },
  );
  const refusals: Array<[number, Record<string, string | string[]>, RegExp]> = [
    [200, {}, /no WebHook-Allowed-Origin/],
    [405, { 'webhook-allowed-origin': '*' }, /HTTP 405/],
    [200, { 'webhook-allowed-origin': 'evil.example.com' }, /another origin/],
    [200, { 'webhook-allowed-origin': ['*', 'arbor.example.com'] }, /no WebHook-Allowed-Origin/],
    [200, { 'webhook-allowed-origin': '*', 'webhook-allowed-rate': '0' }, /not a positive/],
    [200, { 'webhook-allowed-origin': '*', 'webhook-allowed-rate': '1e3' }, /not a positive/],
  ];
  for (const [status, headers, why] of refusals) {
    const c = answer(status, headers);
    t.false(c.agreed, JSON.stringify(headers));
    if (!c.agreed) t.regex(c.why, why);
  }
});
