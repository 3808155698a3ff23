import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { runArbor } from '../helpers/cli-run.js';
import type { GrpcReply, GrpcTestServer } from '../helpers/grpc-server.js';
import { ADMIN_TOKEN } from '../helpers/server.js';
import { createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
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
 * The check API explains conditions and delegation the same on both doors: a conditional
 * binding's evaluation in a check's proof (gRPC as REST), who-can's conditional holders
 * apart from its holders, what-can's conditional grants apart from what is held, a
 * delegated caller told "as actor for subject", and who-can's delegation policies, each
 * only to a caller that may list (or read) what it names.
 */
let s: GrpcTestServer;
let org: string;
let folder: string;
let sibling: string;
let ci: string;
let agent: string;
let cond: string;
let condBinding: string;
let lister: string;
let outsider: string;

const A = '/iam/v2beta1/access';
const WHEN = { expression: 'resource.group.path.startsWith("oauth-org/team")', title: 'team only' };

test.before(async () => {
  let issuer;
  ({ s, issuer, org, folder, sibling, ci } = await startOAuthWorld());
  const claim = (sub: string) => ({ issuer: issuer.url, subject: sub });
  agent = await createIdentity(s.admin, org, 'agent', claim('sub-agent'));
  await createBinding(s.admin, org, agent, await builtinRoleUid(s.admin, 'viewer'));
  const reader = await createRole(s.admin, org, 'reader', ['groups.list', 'repo.list']);
  cond = await createIdentity(s.admin, org, 'cond', claim('sub-cond'));
  const made = await s.admin.post(`/iam/v2beta1/roleBindings/${org}`, {
    identityUid: cond,
    roleUid: reader,
    condition: WHEN,
  });
  if (made.status !== 200) throw new Error(JSON.stringify(made.body));
  condBinding = made.body.uid;
  // May list bindings and identities in the whole org, but update no identity: it sees
  // the conditional holder, never a delegation policy.
  lister = await createIdentity(s.admin, org, 'lister', claim('sub-lister'));
  await createBinding(s.admin, org, lister, await builtinRoleUid(s.admin, 'viewer'));
  // May list identities and groups in the org but bindings only at the sibling: the org's
  // bindings are not its to learn.
  outsider = await createIdentity(s.admin, org, 'outsider', claim('sub-outsider'));
  await createBinding(s.admin, sibling, outsider, await builtinRoleUid(s.admin, 'owner'));
  const browse = await createRole(s.admin, org, 'browse', ['identity.list', 'groups.list']);
  await createBinding(s.admin, org, outsider, browse);
  const set = await s.admin.post('/iam/v2beta1/identities:setDelegationPolicy', {
    identityUid: ci,
    actors: [agent],
    capabilities: ['groups.list', 'identity.list', 'role_bindings.list', 'roles.list'],
    maxLifetimeSeconds: 900,
  });
  if (set.status !== 200) throw new Error(JSON.stringify(set.body));
});
test.after.always(stopOAuthWorld);

async function apiToken(uid: string, sub: string): Promise<string> {
  return exchange({
    subject_token: await workloadToken(sub),
    subject_token_type: ID_TOKEN,
    identity: uid,
  });
}

/** ci's token acted through by agent (RFC 8693 actor_token). */
async function delegated(): Promise<string> {
  return exchange({
    subject_token: await workloadToken('sub-ci'),
    subject_token_type: ID_TOKEN,
    identity: ci,
    actor_token: await apiToken(agent, 'sub-agent'),
    actor_token_type: ACCESS,
  });
}

/**
 * An answer without what proto3 JSON leaves out (empty lists, empty strings, false and 0
 * are its fields' defaults), so a gRPC answer compares with the REST one field for field.
 */
function bare(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(bare);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v))
    if (x !== '' && x !== false && x !== 0 && !(Array.isArray(x) && x.length === 0))
      out[k] = bare(x);
  return out;
}

/** A gRPC call's answer; a failed call fails the test with its status. */
function json(r: GrpcReply): any {
  if (!r.ok) throw new Error(`gRPC call failed: ${JSON.stringify(r)}`);
  return r.json;
}

/** The REST query string of a list's filters (the gRPC request takes them as fields). */
const query = (q: Record<string, string>) =>
  Object.entries(q)
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&');

test('check: a condition is explained the same on REST and gRPC, held and not', async (t) => {
  for (const [groupUid, allowed] of [
    [folder, true],
    [sibling, false],
  ] as const) {
    const ask = { identityUid: cond, capability: 'repo.list', groupUid };
    const rest = await s.admin.post(`${A}:check`, ask);
    t.is(rest.status, 200, JSON.stringify(rest.body));
    t.is(rest.body.allowed, allowed);
    const proof = allowed ? rest.body.grants[0] : rest.body.conditional[0];
    t.is(proof.bindingUid, condBinding);
    t.like(proof.condition, { ...WHEN, result: allowed });
    t.is(
      proof.condition.values['resource.group.path'],
      allowed ? 'oauth-org/team' : 'oauth-org/other-team',
    );
    const grpc = await s.grpcAdmin.call(AccessService, 'CheckAccess', ask);
    t.true(grpc.ok, JSON.stringify(grpc));
    t.deepEqual(bare(json(grpc)), bare(rest.body), 'the gRPC answer is the REST answer');
  }
});

test('who-can: conditional holders apart, with their condition; REST and gRPC alike', async (t) => {
  const q = { group: folder, capability: 'repo.list' };
  const rest = await s.admin.get(`${A}:whoCan?${query(q)}`);
  t.is(rest.status, 200, JSON.stringify(rest.body));
  const holders = rest.body.identities.map((h: { identityUid: string }) => h.identityUid);
  t.false(holders.includes(cond), 'a conditional binding makes no holder');
  t.true(holders.includes(ci));
  t.is(rest.body.totalCount, String(holders.length));
  t.deepEqual(
    rest.body.conditionalHolders.map((h: { identityUid: string }) => h.identityUid),
    [cond],
  );
  t.deepEqual(rest.body.conditionalHolders[0].grants[0].when, WHEN);
  t.is(rest.body.conditionalHolders[0].grants[0].bindingUid, condBinding);
  const grpc = await s.grpcAdmin.call(AccessService, 'WhoCan', q);
  t.true(grpc.ok, JSON.stringify(grpc));
  t.deepEqual(bare(json(grpc)), bare(rest.body));
  // A later page does not repeat them.
  const first = await s.admin.get(`${A}:whoCan?${query({ ...q, page_size: '1' })}`);
  t.truthy(first.body.nextPageToken);
  const next = await s.admin.get(
    `${A}:whoCan?${query({ ...q, page_size: '1', page_token: first.body.nextPageToken })}`,
  );
  t.is(next.status, 200, JSON.stringify(next.body));
  t.is(next.body.conditionalHolders, undefined);
});

test('who-can: delegation policies of holders, with their cap and lifetime', async (t) => {
  const q = { group: folder, capability: 'groups.list' };
  const want = {
    identityUid: ci,
    actors: [agent],
    capabilities: ['groups.list', 'identity.list', 'role_bindings.list', 'roles.list'],
    maxLifetimeSeconds: 900,
  };
  const rest = await s.admin.get(`${A}:whoCan?${query(q)}`);
  t.deepEqual(rest.body.delegations, [want]);
  const grpc = await s.grpcAdmin.call(AccessService, 'WhoCan', q);
  t.deepEqual(json(grpc).delegations, [want]);
  // A capability the policy does not let anyone act with: no delegation to show.
  const other = await s.admin.get(`${A}:whoCan?${query({ ...q, capability: 'repo.list' })}`);
  t.is(other.body.delegations, undefined);
});

test('what-can: conditional grants apart from what is held', async (t) => {
  const rest = await s.admin.get(`${A}:whatCan?identity=${cond}`);
  t.is(rest.status, 200, JSON.stringify(rest.body));
  const atOrg = rest.body.groups.find((g: { groupUid: string }) => g.groupUid === org);
  t.deepEqual(atOrg.bindings, []);
  t.deepEqual(atOrg.capabilities, [], 'a condition is not a capability held');
  t.deepEqual(atOrg.effectiveCapabilities, []);
  t.is(atOrg.conditional.length, 1);
  t.like(atOrg.conditional[0], { bindingUid: condBinding, when: WHEN });
  t.deepEqual(atOrg.conditional[0].capabilities, ['groups.list', 'repo.list']);
  const grpc = await s.grpcAdmin.call(AccessService, 'WhatCan', { identity: cond });
  t.true(grpc.ok, JSON.stringify(grpc));
  t.deepEqual(bare(json(grpc)), bare(rest.body));
});

test('delegated caller: check and what-can answer as the actor for the subject', async (t) => {
  const token = await delegated();
  const rest = s.client(token);
  const grpc = s.grpc(token);
  try {
    const asked = await rest.post(`${A}:check`, { capability: 'groups.list', groupUid: folder });
    t.is(asked.status, 200, JSON.stringify(asked.body));
    t.is(asked.body.identityUid, ci, 'answered for the subject');
    t.true(asked.body.allowed);
    const acting = {
      identityUid: ci,
      actors: [agent],
      capabilities: ['groups.list', 'identity.list', 'role_bindings.list', 'roles.list'],
    };
    t.deepEqual(asked.body.actingFor, { ...acting, capabilityInScope: true });
    // ci holds repo.list, but the token acting for it may not use it.
    const beyond = await rest.post(`${A}:check`, { capability: 'repo.list', groupUid: folder });
    t.true(beyond.body.allowed);
    t.false(beyond.body.actingFor.capabilityInScope);
    const viaGrpc = await grpc.call(AccessService, 'CheckAccess', {
      capability: 'repo.list',
      groupUid: folder,
    });
    t.deepEqual(bare(json(viaGrpc)), bare(beyond.body));
    const what = await rest.get(`${A}:whatCan`);
    t.is(what.status, 200, JSON.stringify(what.body));
    t.deepEqual(what.body.actingFor, acting);
    t.deepEqual(json(await grpc.call(AccessService, 'WhatCan', {})).actingFor, acting);
  } finally {
    grpc.close();
  }
  // A token that is not delegated is told nothing of the kind.
  const plain = await s.client(await apiToken(ci, 'sub-ci')).post(`${A}:check`, {
    capability: 'groups.list',
    groupUid: folder,
  });
  t.is(plain.body.actingFor, undefined);
  t.is(
    (
      await s.admin.post(`${A}:check`, {
        identityUid: ci,
        capability: 'groups.list',
        groupUid: folder,
      })
    ).body.actingFor,
    undefined,
  );
});

test('attack: a caller learns no conditional binding nor delegation policy it may not list', async (t) => {
  // The lister may list every binding in the org: it sees the conditional holder, but it
  // may update no identity, so it is shown no delegation policy (nor may it Get one).
  const listerToken = await apiToken(lister, 'sub-lister');
  const asLister = s.client(listerToken);
  const seen = await asLister.get(
    `${A}:whoCan?${query({ group: folder, capability: 'groups.list' })}`,
  );
  t.is(seen.status, 200, JSON.stringify(seen.body));
  t.true(seen.body.identities.some((h: { identityUid: string }) => h.identityUid === ci));
  t.deepEqual(
    seen.body.conditionalHolders.map((h: { identityUid: string }) => h.identityUid),
    [cond],
  );
  t.is(seen.body.delegations, undefined);
  t.is(
    (await asLister.post('/iam/v2beta1/identities:getDelegationPolicy', { identityUid: ci }))
      .status,
    403,
  );
  const listerGrpc = s.grpc(listerToken);
  const g = await listerGrpc.call(AccessService, 'WhoCan', {
    group: folder,
    capability: 'groups.list',
  });
  listerGrpc.close();
  t.deepEqual(json(g).delegations ?? [], []);
  // The outsider owns the sibling (it may update identities there, none of them ci) and
  // lists bindings there only: the org's conditional binding is not its to learn.
  const outsiderToken = await apiToken(outsider, 'sub-outsider');
  const asOutsider = s.client(outsiderToken);
  const there = await asOutsider.get(
    `${A}:whoCan?${query({ group: sibling, capability: 'repo.list' })}`,
  );
  t.is(there.status, 200, JSON.stringify(there.body));
  t.is(there.body.conditionalHolders, undefined);
  t.is(there.body.delegations, undefined);
  t.true(there.body.partial);
  const denied = await asOutsider.post(`${A}:check`, {
    identityUid: cond,
    capability: 'repo.list',
    groupUid: sibling,
  });
  t.is(denied.status, 200, JSON.stringify(denied.body));
  t.is(denied.body.conditional, undefined, 'no word of a binding it may not list');
  t.false(JSON.stringify(denied.body).includes(condBinding));
  const outsiderGrpc = s.grpc(outsiderToken);
  const viaGrpc = await outsiderGrpc.call(AccessService, 'WhoCan', {
    group: sibling,
    capability: 'repo.list',
  });
  outsiderGrpc.close();
  t.deepEqual(json(viaGrpc).conditionalHolders ?? [], []);
  t.false(JSON.stringify(json(viaGrpc)).includes(cond));
});

test('CLI: who-can and what-can mark conditional grants "when …"; can-i says as whom for whom', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'arbor-access-explain-'));
  const arbor = (args: string[], token: string) =>
    runArbor([...args, '--api', s.url], { HOME: home, ARBOR_TOKEN: token });
  try {
    const who = await arbor(['who-can', 'repo.list', '--group', folder], ADMIN_TOKEN);
    t.is(who.code, 0, who.stderr);
    const condRow = who.stdout.split('\n').find((l) => l.includes('oauth-org/cond'));
    t.truthy(condRow, who.stdout);
    t.true(condRow!.includes('reader (when team only)'), who.stdout);
    const json = await arbor(
      ['who-can', 'repo.list', '--group', folder, '-o', 'json'],
      ADMIN_TOKEN,
    );
    t.false(json.stdout.includes(cond), 'JSON stays the holders alone');
    const held = await arbor(['who-can', 'groups.list', '--group', folder], ADMIN_TOKEN);
    t.regex(
      held.stdout,
      /delegations:\n {2}oauth-org\/agent may act for oauth-org\/ci \(at most .*; 900s a delegation\)/,
    );
    const what = await arbor(['what-can', '--as', cond], ADMIN_TOKEN);
    t.is(what.code, 0, what.stderr);
    t.true(what.stdout.includes('reader (when team only)'), what.stdout);
    const token = await delegated();
    const can = await arbor(['can-i', 'repo.list', '--group', folder], token);
    t.is(can.code, 0, can.stderr);
    t.regex(
      can.stderr,
      /\(as oauth-org\/agent for oauth-org\/ci; this token may not use the capability asked about\)/,
    );
    const whatAs = await arbor(['what-can'], token);
    t.regex(
      whatAs.stderr,
      /\(as oauth-org\/agent for oauth-org\/ci; this token may use groups\.list,/,
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
