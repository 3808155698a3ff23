import test, { type ExecutionContext } from 'ava';
import { IdentitiesService } from '../../src/gen/arbor/iam/v2beta1/identities_pb.js';
import type { GrpcReply, GrpcTestServer } from '../helpers/grpc-server.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import {
  ACCESS,
  ID_TOKEN,
  exchange,
  startOAuthWorld,
  stopOAuthWorld,
  workloadToken,
} from '../helpers/oauth-world.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';

/**
 * IdentitiesService GetDelegationPolicy and SetDelegationPolicy answer as REST's
 * `identities:getDelegationPolicy` and `:setDelegationPolicy` do (oauth-delegation.test.ts
 * has the rules; this checks the door): the same policy, the same refusals, byte for byte,
 * for the admin, an identity that may not see the identity, one that sees but may not update
 * it, and a delegated token.
 */
let s: GrpcTestServer;
let org: string;
let ci: string;
let stranger: string;
let agent: string;
let strangerToken: string;
let ciToken: string;

const REST = '/iam/v2beta1/identities';

async function apiTokenOf(uid: string, sub: string): Promise<string> {
  return exchange({
    subject_token: await workloadToken(sub),
    subject_token_type: ID_TOKEN,
    identity: uid,
  });
}

test.before(async () => {
  let issuer;
  ({ s, issuer, org, ci, stranger } = await startOAuthWorld());
  agent = await createIdentity(s.admin, org, 'agent', { issuer: issuer.url, subject: 'sub-agent' });
  await createBinding(s.admin, org, agent, await builtinRoleUid(s.admin, 'viewer'));
  strangerToken = await apiTokenOf(stranger, 'sub-stranger');
  ciToken = await apiTokenOf(ci, 'sub-ci');
});
test.after.always(stopOAuthWorld);

type Body = Record<string, unknown>;

/** Both doors, with the same caller and the same request (REST's body, gRPC's proto3 JSON). */
async function both(method: 'get' | 'set', body: Body, token?: string) {
  const restClient = token === undefined ? s.admin : s.client(token);
  const grpc = token === undefined ? s.grpcAdmin : s.grpc(token);
  const rest = await restClient.post(
    `${REST}:${method === 'get' ? 'getDelegationPolicy' : 'setDelegationPolicy'}`,
    body,
  );
  const reply = await grpc.call(
    IdentitiesService,
    method === 'get' ? 'GetDelegationPolicy' : 'SetDelegationPolicy',
    body,
  );
  return { rest, grpc: reply };
}

/** gRPC refused as REST did: the same google.rpc.Status (code, message, details). */
function sameRefusal(
  t: ExecutionContext,
  r: { rest: { status: number; body: any }; grpc: GrpcReply },
  code: number,
  what: string,
): void {
  t.false(r.grpc.ok, `${what}: gRPC answered ${JSON.stringify(r.grpc)}`);
  t.is(r.grpc.code, code, `${what}: gRPC code`);
  t.is(r.rest.body.code, code, `${what}: REST code`);
  if (!r.grpc.ok) t.deepEqual(r.grpc.status, r.rest.body, `${what}: status`);
}

test.serial('set and get over gRPC answer the policy REST answers', async (t) => {
  const set = await s.grpcAdmin.call(IdentitiesService, 'SetDelegationPolicy', {
    identityUid: ci,
    actors: [agent],
    capabilities: ['repo.list', 'groups.list', 'repo.list'],
    maxLifetimeSeconds: 900,
  });
  t.true(set.ok, JSON.stringify(set));
  if (!set.ok) return;
  t.like(set.json, {
    identityUid: ci,
    actors: [agent],
    capabilities: ['groups.list', 'repo.list'],
    maxLifetimeSeconds: 900,
    setBy: 'admin',
  });
  const r = await both('get', { identityUid: ci });
  t.is(r.rest.status, 200, JSON.stringify(r.rest.body));
  t.true(r.grpc.ok, JSON.stringify(r.grpc));
  if (r.grpc.ok) t.deepEqual(r.grpc.json, r.rest.body);
  t.deepEqual(set.json, r.rest.body, 'the set answer is the policy as read');
  // Without max_lifetime_seconds: the default hour, as REST's body without the field.
  const dflt = await both('set', {
    identityUid: ci,
    actors: [agent],
    capabilities: ['groups.list'],
  });
  t.true(dflt.grpc.ok, JSON.stringify(dflt.grpc));
  if (dflt.grpc.ok) t.is(dflt.grpc.json.maxLifetimeSeconds, 3600);
  t.is(dflt.rest.body.maxLifetimeSeconds, 3600);
});

test.serial(
  'attacks: a caller that may not see the identity, or not update it, is refused as over REST',
  async (t) => {
    await both('set', { identityUid: ci, actors: [agent], capabilities: ['groups.list'] });
    const before = await s.admin.post(`${REST}:getDelegationPolicy`, { identityUid: ci });
    // The stranger cannot see ci: NOT_FOUND for the read and the write, as for a missing one.
    sameRefusal(t, await both('get', { identityUid: ci }, strangerToken), 5, 'stranger get');
    sameRefusal(
      t,
      await both(
        'set',
        { identityUid: ci, actors: [stranger], capabilities: ['groups.list'] },
        strangerToken,
      ),
      5,
      'stranger set',
    );
    sameRefusal(
      t,
      await both('set', { identityUid: ci, actors: [] }, strangerToken),
      5,
      'stranger removal',
    );
    const missing = `${org}/00000000000000ff`;
    sameRefusal(
      t,
      await both('get', { identityUid: missing }, strangerToken),
      5,
      'missing identity',
    );
    // ci sees itself (viewer) but may not update itself: PERMISSION_DENIED, read and write.
    sameRefusal(t, await both('get', { identityUid: ci }, ciToken), 7, 'ci get');
    sameRefusal(
      t,
      await both(
        'set',
        { identityUid: ci, actors: [stranger], capabilities: ['groups.list'] },
        ciToken,
      ),
      7,
      'ci set',
    );
    // A delegated token sets no policy, even its subject's own.
    const delegated = await exchange({
      subject_token: await workloadToken('sub-ci'),
      subject_token_type: ID_TOKEN,
      identity: ci,
      actor_token: await apiTokenOf(agent, 'sub-agent'),
      actor_token_type: ACCESS,
    });
    sameRefusal(
      t,
      await both(
        'set',
        { identityUid: ci, actors: [agent, stranger], capabilities: ['groups.list'] },
        delegated,
      ),
      7,
      'delegated set',
    );
    const after = await s.admin.post(`${REST}:getDelegationPolicy`, { identityUid: ci });
    t.deepEqual(after.body, before.body, 'no refused call changed the policy');
  },
);

test.serial('invalid requests are INVALID_ARGUMENT with the same violations', async (t) => {
  const many = Array.from(
    { length: 33 },
    (_, i) => `${org}/${(i + 16).toString(16).padStart(16, 'a')}`,
  );
  for (const [what, bad] of [
    ['too many actors', { identityUid: ci, actors: many, capabilities: ['groups.list'] }],
    [
      'outside the catalogue',
      { identityUid: ci, actors: [agent], capabilities: ['groups.everything'] },
    ],
    [
      'more than a day',
      {
        identityUid: ci,
        actors: [agent],
        capabilities: ['groups.list'],
        maxLifetimeSeconds: 86_401,
      },
    ],
    ['no capability', { identityUid: ci, actors: [agent] }],
    ['itself', { identityUid: ci, actors: [ci], capabilities: ['groups.list'] }],
    ['not a uid', { identityUid: 'ci', actors: [agent], capabilities: ['groups.list'] }],
  ] as const) {
    sameRefusal(t, await both('set', bad as Body), 3, what);
  }
  // proto3 has no absent string: an empty one is REST's body without the field.
  sameRefusal(t, await both('get', {}), 3, 'no identity');
  const empty = await s.grpcAdmin.call(IdentitiesService, 'GetDelegationPolicy', {
    identityUid: '',
  });
  t.is(empty.code, 3);
});

test.serial('no actors removes the policy over gRPC; then NOT_FOUND', async (t) => {
  await both('set', { identityUid: ci, actors: [agent], capabilities: ['groups.list'] });
  const removed = await s.grpcAdmin.call(IdentitiesService, 'SetDelegationPolicy', {
    identityUid: ci,
  });
  t.true(removed.ok, JSON.stringify(removed));
  if (removed.ok) t.deepEqual(removed.json, {});
  sameRefusal(t, await both('get', { identityUid: ci }), 5, 'removed');
  sameRefusal(t, await both('set', { identityUid: ci, actors: [] }), 5, 'removed twice');
});
