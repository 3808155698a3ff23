import test from 'ava';
import { decodeJwt } from 'jose';
import { createGroup } from '../helpers/fixtures.js';
import { startEventSink, until, type EventSink } from '../helpers/event-sink.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

// The audit trail and events show no more than the API. A person the
// owner of organization B cannot see through the API (404; bindings show their uid only)
// must not appear with name, email, issuer and subject in B's audit list or B's events.
const CLIENT = 'arbor-cli';
const EMAIL = 'alice.hidden@a.example';
const NAME = 'Alice Hidden';

let s: TestServer;
let pub: TestIssuer;
let sink: EventSink;

test.before(async () => {
  pub = await TestIssuer.start();
  sink = await startEventSink();
  s = await startServer({
    ARBOR_ALLOW_INSECURE_ISSUERS: 'true',
    ARBOR_LOGIN_ISSUER: pub.url,
    ARBOR_LOGIN_CLIENT_ID: CLIENT,
    ARBOR_ALLOW_PRIVATE_SINKS: 'true',
    ARBOR_EVENTS_POLL_MS: '50',
    ARBOR_EVENTS_BACKOFF_MS: '50',
    ARBOR_EVENTS_BACKOFF_MAX_MS: '200',
  });
  s.arbor.delivery.start();
});
test.after.always(async () => {
  await s?.close();
  await sink?.close();
  await pub?.stop();
});

async function personToken(sub: string, extra: Record<string, unknown> = {}): Promise<string> {
  const idToken = await pub.mint({ sub, aud: CLIENT, ...extra });
  const aud = encodeURIComponent(s.arbor.config.issuerUrl);
  const res = await s.client(idToken).get(`/sts/exchange?aud=${aud}`);
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  return res.body.token as string;
}

test('audit and events: a reference the reader cannot see shows by uid only', async (t) => {
  const orgB = await createGroup(s.admin, 'audit-refs-b');
  const owner = await personToken('mallory');
  const bound = await s.admin.post(`/iam/v2beta1/roleBindings/${orgB}`, {
    identityUid: decodeJwt(owner).sub,
    roleUid: await builtinRoleUid(s.admin, 'owner'),
  });
  t.is(bound.status, 200);
  const mallory = s.client(owner);
  const sub = await mallory.post(`/events/v2beta1/subscriptions/${orgB}`, {
    name: 'b events',
    sink: sink.url,
  });
  t.is(sub.status, 200, JSON.stringify(sub.body));

  // Alice joins B through an invite; she is a root-level person B's owner cannot list.
  const alice = await personToken('alice-hidden', { email: EMAIL, name: NAME });
  const aliceUid = decodeJwt(alice).sub!;
  const invite = await mallory.post(`/iam/v2beta1/groupInvites/${orgB}`, {
    roleUid: await builtinRoleUid(s.admin, 'viewer'),
    ttl: '3600s',
  });
  t.is(invite.status, 200, JSON.stringify(invite.body));
  const joined = await s
    .client(alice)
    .post('/iam/v2beta1/groupInvites:redeem', { code: invite.body.code });
  t.is(joined.status, 200, JSON.stringify(joined.body));

  // What the API shows Mallory of Alice: nothing but her uid.
  t.is((await mallory.get(`/iam/v2beta1/identities/${aliceUid}`)).status, 404);
  const binding = await mallory.get(`/iam/v2beta1/roleBindings/${joined.body.uid}`);
  t.is(binding.body.identity.name, '');

  const hidden = [EMAIL, NAME, 'alice-hidden', pub.url];
  const audit = await mallory.get(
    `/audit/v2beta1/events?resource_uid=${encodeURIComponent(joined.body.uid)}`,
  );
  t.is(audit.status, 200, JSON.stringify(audit.body));
  t.is(audit.body.events.length, 1);
  t.deepEqual(audit.body.events[0].after.identity, { uid: aliceUid });
  for (const h of hidden) t.false(JSON.stringify(audit.body).includes(h), `audit shows ${h}`);

  const delivered = await until('the binding event', () =>
    sink.accepted().find((r) => r.raw.includes(joined.body.uid)),
  );
  for (const h of hidden) t.false(delivered.raw.includes(h), `the event shows ${h}`);
});
