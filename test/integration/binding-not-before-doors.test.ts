import test from 'ava';
import { decodeJwt } from 'jose';
import { RoleBindingsService } from '../../src/gen/arbor/iam/v2beta1/role_bindings_pb.js';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { basic } from '../helpers/registry-fixtures.js';

/**
 * A binding's start (`notBefore`) through the doors binding-not-before.test.ts does not
 * walk: gRPC's CreateRoleBinding (stored, shown pending, an empty window refused on the
 * field) and the registry's token server (a push or pull binding not yet started is not
 * in the token's access). The starts are an hour off, so "not yet" holds on any machine.
 */
const SERVICE = 'registry.test.local';
const HOUR = 3_600_000;

let s: GrpcTestServer;
let org: string;

test.before(async () => {
  s = await startGrpcServer({
    ARBOR_REGISTRY_SERVICE: SERVICE,
    ARBOR_REGISTRY_NOTIFY_TOKEN: 'notify-secret-0123456789',
  });
  org = await createGroup(s.admin, 'starts');
});
test.after.always(async () => {
  await s?.close();
});

test('gRPC CreateRoleBinding: notBefore is stored and shown pending; an empty window is INVALID_ARGUMENT on notBefore', async (t) => {
  const id = await createIdentity(s.admin, org, 'grpc-scheduled');
  const start = new Date(Date.now() + HOUR);
  const made = await s.grpcAdmin.call(RoleBindingsService, 'CreateRoleBinding', {
    parent: org,
    roleBinding: {
      identityUid: id,
      roleUid: builtinRoleUid('viewer'),
      notBefore: start.toISOString(),
    },
  });
  t.true(made.ok, JSON.stringify(made));
  if (!made.ok) return;
  t.is(new Date(made.json.notBefore).getTime(), start.getTime());
  t.true(made.json.pending);
  // REST reads the same binding the same way.
  const rest = await s.admin.get(`/iam/v2beta1/roleBindings/${made.json.uid}`);
  t.is(new Date(rest.body.notBefore).getTime(), start.getTime());
  t.true(rest.body.pending);
  // Not granting before its start: a check through the same door says no.
  const check = await s.admin.post('/iam/v2beta1/access:check', {
    identityUid: id,
    capability: 'groups.list',
    groupUid: org,
  });
  t.false(check.body.allowed);

  const empty = await s.grpcAdmin.call(RoleBindingsService, 'CreateRoleBinding', {
    parent: org,
    roleBinding: {
      identityUid: await createIdentity(s.admin, org, 'grpc-empty'),
      roleUid: builtinRoleUid('viewer'),
      notBefore: start.toISOString(),
      expireTime: start.toISOString(),
    },
  });
  t.false(empty.ok);
  if (empty.ok) return;
  t.is(empty.code, 3, 'INVALID_ARGUMENT');
  // The google.rpc.Status of grpc-status-details-bin, as REST renders it.
  t.regex(empty.status?.message ?? '', /^Invalid argument: notBefore: /);
  t.regex(JSON.stringify(empty.status ?? {}), /"field":"notBefore"/);
});

/** The registry token's `access` for `uid` asking pull and push on `repo`. */
async function registryAccess(uid: string, sub: string, repo: string) {
  const apiToken = (await s.arbor.tokens.sign(uid, { iss: ISSUER, sub })).token;
  const q = new URLSearchParams({ service: SERVICE, account: 'x' });
  q.append('scope', `repository:${repo}:pull,push`);
  const res = await s.client().raw(`/auth/registry/token?${q.toString()}`, {
    headers: { authorization: basic('_token', apiToken) },
  });
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return decodeJwt(res.body.token).access as Array<{ name: string; actions: string[] }>;
}

test('registry token: a push or pull binding not yet started is not in the access', async (t) => {
  const repo = `${org}/app`;
  const at = (ms: number) => new Date(ms).toISOString();
  // Pull now, push only from an hour on: pull alone.
  const puller = await createIdentity(s.admin, org, 'reg-puller');
  await createBinding(s.admin, org, puller, builtinRoleUid('registry.pull'));
  const later = await s.admin.post(`/iam/v2beta1/roleBindings/${org}`, {
    identityUid: puller,
    roleUid: builtinRoleUid('registry.push'),
    notBefore: at(Date.now() + HOUR),
  });
  t.is(later.status, 200);
  t.true(later.body.pending);
  t.deepEqual(await registryAccess(puller, 'sub-reg-puller', repo), [
    { type: 'repository', name: repo, actions: ['pull'] },
  ]);
  // Only a scheduled pull: nothing at all.
  const waiting = await createIdentity(s.admin, org, 'reg-waiting');
  const sched = await s.admin.post(`/iam/v2beta1/roleBindings/${org}`, {
    identityUid: waiting,
    roleUid: builtinRoleUid('registry.pull'),
    notBefore: at(Date.now() + HOUR),
  });
  t.is(sched.status, 200);
  t.deepEqual(await registryAccess(waiting, 'sub-reg-waiting', repo), []);
  // A start already passed grants as any binding does (the control: the door reads windows).
  const started = await createIdentity(s.admin, org, 'reg-started');
  const past = await s.admin.post(`/iam/v2beta1/roleBindings/${org}`, {
    identityUid: started,
    roleUid: builtinRoleUid('registry.push'),
    notBefore: at(Date.now() - HOUR),
  });
  t.is(past.status, 200);
  t.deepEqual(await registryAccess(started, 'sub-reg-started', repo), [
    { type: 'repository', name: repo, actions: ['pull', 'push'] },
  ]);
});
