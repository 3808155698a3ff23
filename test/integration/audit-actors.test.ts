import test from 'ava';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { FAST_DELIVERY, startEventSink, until, type EventSink } from '../helpers/event-sink.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';

/**
 * A change made with a delegated token (RFC 8693 `actor_token`) names its actor chain in
 * its audit record (`actors`, with paths where the reader may see them) and in its event
 * (`arboractors`): "agent for person". A change made with a token of one's own names none.
 * Over REST and gRPC, on both databases.
 */
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const POLICY = '/iam/v2beta1/identities:setDelegationPolicy';

let s: GrpcTestServer;
let k: EventSink;
let org: string;
let team: string;
let ci: string;
let agent: string;
let helper: string;
let ciToken: string;
let agentToken: string;
let teamOwnerToken: string;

const apiToken = async (uid: string, sub: string) =>
  (await s.arbor.tokens.sign(uid, { iss: ISSUER, sub })).token;

/** The token endpoint: `subject` exchanged for a token of its own identity, `actor` acting. */
async function delegated(subject: string, actor: string, scope: string): Promise<string> {
  const res = await fetch(`${s.url}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: EXCHANGE,
      subject_token: subject,
      subject_token_type: ACCESS,
      actor_token: actor,
      actor_token_type: ACCESS,
      scope,
    }),
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) throw new Error(`exchange: ${JSON.stringify(body)}`);
  return body.access_token as string;
}

async function setPolicy(identityUid: string, actors: string[]): Promise<void> {
  const r = await s.admin.post(POLICY, {
    identityUid,
    actors,
    capabilities: ['groups.create', 'groups.list'],
  });
  if (r.status !== 200) throw new Error(`policy: ${JSON.stringify(r.body)}`);
}

test.before(async () => {
  s = await startGrpcServer({ ...FAST_DELIVERY });
  s.arbor.delivery.start();
  k = await startEventSink();
  org = await createGroup(s.admin, 'audit-actors');
  team = await createGroup(s.admin, 'team', org);
  // The agents live in a group of their own: a team owner may not see them.
  const bots = await createGroup(s.admin, 'bots', org);
  ci = await createIdentity(s.admin, org, 'ci');
  agent = await createIdentity(s.admin, bots, 'agent');
  helper = await createIdentity(s.admin, bots, 'helper');
  const teamOwner = await createIdentity(s.admin, team, 'team-owner');
  await createBinding(s.admin, org, ci, builtinRoleUid('owner'));
  // The agent holds what it passes on: a chain's token holds its every link's grants at most.
  await createBinding(s.admin, org, agent, builtinRoleUid('owner'));
  await createBinding(s.admin, org, helper, builtinRoleUid('viewer'));
  await createBinding(s.admin, team, teamOwner, builtinRoleUid('owner'));
  const sub = await s.admin.post(`/events/v2beta1/subscriptions/${org}`, {
    name: 'hook',
    sink: k.url,
    types: ['dev.arbor.iam.group.*'],
  });
  if (sub.status !== 200) throw new Error(`subscribe: ${JSON.stringify(sub.body)}`);
  await until('the subscription is active', async () => {
    const r = await s.admin.get(`/events/v2beta1/subscriptions/${sub.body.uid}`);
    return r.body.status?.state === 'ACTIVE';
  });
  ciToken = await apiToken(ci, 'sub-ci');
  agentToken = await apiToken(agent, 'sub-agent');
  teamOwnerToken = await apiToken(teamOwner, 'sub-team-owner');
  await setPolicy(ci, [agent]);
});
test.after.always(async () => {
  await s?.close();
  await k?.close();
});

interface Record_ {
  actor: string;
  actorPath?: string;
  actors?: Array<{ uid: string; path?: string }>;
  door: string;
  resourceUid: string;
  operation: string;
}

async function recordOf(uid: string, token?: string): Promise<Record_> {
  const c = token === undefined ? s.admin : s.client(token);
  const r = await c.get(`/audit/v2beta1/events?resource_uid=${encodeURIComponent(uid)}`);
  if (r.status !== 200) throw new Error(`audit: ${JSON.stringify(r.body)}`);
  const [e] = (r.body.events as Record_[]).filter((x) => x.operation === 'create');
  if (e === undefined) throw new Error(`no create record of ${uid}`);
  return e;
}

async function eventOf(uid: string): Promise<Record<string, unknown>> {
  const got = await until(`the event of ${uid}`, () =>
    k.accepted().find((r) => r.body.subject === uid),
  );
  return got.body as Record<string, unknown>;
}

async function createOverRest(token: string, parent: string, name: string): Promise<string> {
  const r = await s.client(token).post(`/iam/v2beta1/groups/${parent}`, { name });
  if (r.status !== 200) throw new Error(`create ${name}: ${JSON.stringify(r.body)}`);
  return r.body.uid as string;
}

test.serial(
  'agent for person: REST and gRPC records and events name the subject and the actor',
  async (t) => {
    const token = await delegated(ciToken, agentToken, 'groups.create groups.list');
    const viaRest = await createOverRest(token, org, 'by-agent');
    const made = await s.grpc(token).call(GroupsService, 'CreateGroup', {
      parent: org,
      group: { name: 'by-agent-grpc' },
    });
    t.true(made.ok, JSON.stringify(made));
    if (!made.ok) return;
    for (const [uid, door] of [
      [viaRest, 'rest'],
      [made.json.uid as string, 'grpc'],
    ] as const) {
      const e = await recordOf(uid);
      t.like(e, {
        actor: `identity:${ci}`,
        actorPath: 'audit-actors/ci',
        actors: [{ uid: agent, path: 'audit-actors/bots/agent' }],
        door,
      });
      const ce = await eventOf(uid);
      t.is(ce.arboractor, `identity:${ci}`);
      t.is(ce.arboractors, agent, `${door}: the event names the actor`);
    }
  },
);

test.serial('a token of its own: no actors in the record or the event', async (t) => {
  const uid = await createOverRest(ciToken, org, 'by-ci');
  const e = await recordOf(uid);
  t.is(e.actor, `identity:${ci}`);
  t.false('actors' in e, JSON.stringify(e));
  t.false('actorPath' in e);
  const ce = await eventOf(uid);
  t.false('arboractors' in ce, JSON.stringify(ce));
  // The admin's own changes (the subscription above, these groups' parents) name none either.
  const admin = await recordOf(team);
  t.is(admin.actor, 'admin');
  t.false('actors' in admin);
});

test.serial("a chain: helper for agent for ci, in the order of the token's act", async (t) => {
  await setPolicy(agent, [helper]);
  const helperForAgent = await delegated(
    agentToken,
    await apiToken(helper, 'sub-helper'),
    'groups.create groups.list',
  );
  const chain = await delegated(ciToken, helperForAgent, 'groups.create groups.list');
  const uid = await createOverRest(chain, org, 'by-chain');
  const e = await recordOf(uid);
  t.like(e, {
    actor: `identity:${ci}`,
    actors: [
      { uid: agent, path: 'audit-actors/bots/agent' },
      { uid: helper, path: 'audit-actors/bots/helper' },
    ],
  });
  t.is((await eventOf(uid)).arboractors, `${agent} ${helper}`);
});

test.serial(
  'a reader who may not see the actors reads their uids, never their names',
  async (t) => {
    const token = await delegated(ciToken, agentToken, 'groups.create groups.list');
    const uid = await createOverRest(token, team, 'in-team');
    const e = await recordOf(uid, teamOwnerToken);
    t.deepEqual(e.actors, [{ uid: agent }], 'the agent is in a group the team owner cannot see');
    t.false('actorPath' in e, 'nor the subject, above the team');
    // The admin reads the same record with the paths.
    t.like(await recordOf(uid), { actors: [{ uid: agent, path: 'audit-actors/bots/agent' }] });
  },
);
