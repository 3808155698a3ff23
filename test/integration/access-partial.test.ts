import test from 'ava';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import type { Client } from '../helpers/server.js';

// A folder owner lists the bindings of its folder only: an answer about a group in the
// folder counts no binding above it, and must say so rather than look whole.
let s: GrpcTestServer;
let org: string;
let platform: string;
let team: string;
let ann: string;
let ben: string;
let owen: string;
let owenToken: string;
let peekToken: string;
let owenClient: Client;
let peekClient: Client;
const A = '/iam/v2beta1/access';

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'acme');
  platform = await createGroup(s.admin, 'platform', org);
  team = await createGroup(s.admin, 'team', platform);
  // In the folder (the owner may list her), bound above it.
  ann = await createIdentity(s.admin, platform, 'ann');
  ben = await createIdentity(s.admin, platform, 'ben');
  owen = await createIdentity(s.admin, platform, 'owen');
  const peek = await createIdentity(s.admin, org, 'peek');
  const deleter = await createRole(s.admin, org, 'deleter', ['groups.list', 'groups.delete']);
  const folderOwner = await createRole(s.admin, org, 'folder-owner', [
    'groups.list',
    'identity.list',
    'role_bindings.list',
  ]);
  // Sees groups and identities in the folder, but no binding.
  const peeker = await createRole(s.admin, org, 'peeker', ['groups.list', 'identity.list']);
  await createBinding(s.admin, org, ann, deleter); // above the folder
  await createBinding(s.admin, platform, ben, deleter);
  await createBinding(s.admin, platform, owen, folderOwner);
  await createBinding(s.admin, platform, peek, peeker);
  owenToken = (await s.arbor.tokens.sign(owen, { iss: ISSUER, sub: 'sub-owen' })).token;
  peekToken = (await s.arbor.tokens.sign(peek, { iss: ISSUER, sub: 'sub-peek' })).token;
  owenClient = s.client(owenToken);
  peekClient = s.client(peekToken);
});
test.after.always(async () => {
  await s?.close();
});

const whoCanTeam = `${A}:whoCan?group=${'{team}'}&capability=groups.delete`;
const whoCan = () => whoCanTeam.replace('{team}', team);

test('who can: a folder owner is told holders above the folder are not counted', async (t) => {
  const res = await owenClient.get(whoCan());
  t.is(res.status, 200);
  t.deepEqual(
    res.body.identities.map((h: { identityUid: string }) => h.identityUid),
    [ben],
  );
  t.is(res.body.partial, true);
  t.is(res.body.countedFrom, platform);
  // The admin's answer counts ann too, and is whole: no partial, no countedFrom.
  const whole = await s.admin.get(whoCan());
  t.deepEqual(
    whole.body.identities.map((h: { identityUid: string }) => h.identityUid).sort(),
    [ann, ben].sort(),
  );
  t.false('partial' in whole.body);
  t.false('countedFrom' in whole.body);
});

test('who can: a caller who may list no binding on the path counts only its own', async (t) => {
  const res = await peekClient.get(whoCan());
  t.is(res.status, 200);
  t.deepEqual(res.body.identities, []);
  t.is(res.body.partial, true);
  t.false('countedFrom' in res.body);
});

test('check: a denial above the folder owner’s view says it is partial', async (t) => {
  const res = await owenClient.post(`${A}:check`, {
    identityUid: ann,
    capability: 'groups.delete',
    groupUid: team,
  });
  t.is(res.status, 200);
  t.false(res.body.allowed);
  t.deepEqual(res.body.nearest, []);
  t.is(res.body.partial, true);
  t.is(res.body.countedFrom, platform);
  // Asking about itself counts all its own bindings: whole.
  const self = await owenClient.post(`${A}:check`, { capability: 'groups.delete', groupUid: team });
  t.false(self.body.allowed);
  t.false('partial' in self.body);
  const admin = await s.admin.post(`${A}:check`, {
    identityUid: ann,
    capability: 'groups.delete',
    groupUid: team,
  });
  t.true(admin.body.allowed);
  t.false('partial' in admin.body);
  const batch = await owenClient.post(`${A}:batchCheck`, {
    checks: [{ identityUid: ann, capability: 'groups.delete', groupUid: team }],
  });
  t.is(batch.body.results[0].partial, true);
  t.is(batch.body.results[0].countedFrom, platform);
});

test('what can: partial for a folder owner, per group and for the list', async (t) => {
  const res = await owenClient.get(`${A}:whatCan?identity=${ben}`);
  t.is(res.status, 200);
  t.is(res.body.partial, true);
  t.like(res.body.groups, [{ groupUid: platform, partial: true, countedFrom: platform }]);
  const admin = await s.admin.get(`${A}:whatCan?identity=${ben}`);
  t.false('partial' in admin.body);
  t.false('partial' in admin.body.groups[0]);
  const self = await owenClient.get(`${A}:whatCan`);
  t.false('partial' in self.body);
  t.false('partial' in self.body.groups[0]);
});

test('grpc: the same partial answers', async (t) => {
  const g = s.grpc(owenToken);
  const who = await g.call(AccessService, 'WhoCan', { group: team, capability: 'groups.delete' });
  t.true(who.ok);
  t.like(who.ok && who.json, { partial: true, countedFrom: platform });
  const check = await g.call(AccessService, 'CheckAccess', {
    identityUid: ann,
    capability: 'groups.delete',
    groupUid: team,
  });
  t.like(check.ok && check.json, { partial: true, countedFrom: platform });
  const what = await g.call(AccessService, 'WhatCan', { identity: ben });
  t.like(what.ok && what.json, {
    partial: true,
    groups: [{ groupUid: platform, partial: true, countedFrom: platform }],
  });
  const whole = await s.grpcAdmin.call(AccessService, 'WhoCan', {
    group: team,
    capability: 'groups.delete',
  });
  t.true(whole.ok);
  t.false(whole.ok && 'partial' in whole.json);
  const peek = await s.grpc(peekToken).call(AccessService, 'WhoCan', {
    group: team,
    capability: 'groups.delete',
  });
  t.like(peek.ok && peek.json, { partial: true });
  t.false(peek.ok && 'countedFrom' in peek.json);
});
