import * as grpc from '@grpc/grpc-js';
import test from 'ava';
import { ADMIN, systemPrincipal } from '../../src/auth/principal.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, asIdentity, createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import type { Client } from '../helpers/server.js';

/**
 * The administrator's operations (database status, resealing
 * secrets, a full database dump) and the publishing of trusted issuer keys are refused
 * to every tenant, the owner of an organization included; trusted keys are public keys.
 */
let s: GrpcTestServer;
let owner: string;
let ownerToken: string;
let tenant: Client;

test.before(async () => {
  s = await startGrpcServer();
  const org = await createGroup(s.admin, 'guards-org');
  owner = await createIdentity(s.admin, org, 'org-owner');
  await createBinding(s.admin, org, owner, await builtinRoleUid(s.admin, 'owner'));
  ownerToken = (await s.arbor.tokens.sign(owner, { iss: ISSUER, sub: 'sub-org-owner' })).token;
  tenant = s.client(ownerToken);
});
test.after.always(async () => {
  await s?.close();
});

const ADMIN_OPS = [
  ['get', '/admin/v1/status'],
  ['post', '/admin/v1/secrets:reseal'],
  ['get', '/admin/v1/backup'],
] as const;

for (const [method, path] of ADMIN_OPS) {
  test(`REST ${method.toUpperCase()} ${path}: a tenant is refused, the admin token is served`, async (t) => {
    const asTenant = await tenant[method](path);
    t.is(asTenant.status, 403, JSON.stringify(asTenant.body).slice(0, 200));
    t.is(asTenant.body.code, 7);
    t.regex(asTenant.body.message, /^Permission denied: only an administrator can /);
    t.is((await s.client()[method](path)).status, 401);
    const asAdmin = await s.admin[method](path);
    // The admin is let in: served, or (a dump of PostgreSQL) told to use pg_dump.
    t.true([200, 400].includes(asAdmin.status), `${asAdmin.status}`);
    if (asAdmin.status === 400)
      t.true(JSON.stringify(asAdmin.body.details).includes('NOT_EMBEDDED'));
  });
}

test('the admin service itself refuses a tenant, whichever door calls it', async (t) => {
  const admin = s.arbor.services.admin;
  const p = asIdentity(owner);
  for (const op of [() => admin.status(p), () => admin.resealSecrets(p), () => admin.backup(p)]) {
    await t.throwsAsync(op, { message: /^Permission denied: only an administrator/ });
  }
  t.truthy(await admin.status(ADMIN));
});

/** A unary gRPC call by path, with an empty message: for methods no descriptor offers. */
function rawCall(path: string, token: string): Promise<grpc.ServiceError | undefined> {
  const client = new grpc.Client(s.address, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${token}`);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.alloc(0),
      md,
      (err) => {
        client.close();
        resolve(err ?? undefined);
      },
    );
  });
}

test('gRPC offers no administrator operation: a tenant reaches none by any name', async (t) => {
  for (const path of [
    '/arbor.admin.v1.AdminService/Status',
    '/arbor.admin.v1.AdminService/Backup',
    '/arbor.admin.v1.AdminService/ResealSecrets',
  ]) {
    const err = await rawCall(path, ownerToken);
    t.is(err?.code, grpc.status.UNIMPLEMENTED, path);
  }
});

test('trusted keys: only a superuser publishes, and only public keys', async (t) => {
  const keys = s.arbor.services.trustedKeys;
  const issuer = 'https://cluster.guards.example';
  const pub = { kty: 'EC', crv: 'P-256', x: 'eA', y: 'eQ', kid: 'k1' };
  await t.throwsAsync(keys.publish(asIdentity(owner), issuer, { keys: [pub] }, 'tenant'), {
    message: 'Permission denied: only Arbor components publish trusted keys',
  });
  t.is(await keys.keysFor(issuer), undefined, 'the refused publish stored nothing');
  const reconciler = systemPrincipal('reconciler');
  const privateKey = await keys
    .publish(reconciler, issuer, { keys: [pub, { ...pub, kid: 'k2', d: 'secret' }] }, 'x')
    .then(
      () => undefined,
      (e: Error) => e,
    );
  t.regex(String(privateKey?.message), /jwks: must hold public keys only/);
  await t.throwsAsync(keys.publish(reconciler, issuer, { keys: [] }, 'x'), {
    message: /jwks: must hold at least one key/,
  });
  t.is(await keys.keysFor(issuer), undefined);
  t.true(await keys.publish(reconciler, issuer, { keys: [pub] }, 'reconciler'));
  t.true(await keys.publish(ADMIN, `${issuer}/admin`, { keys: [pub] }, 'admin'));
  t.deepEqual(await keys.keysFor(issuer), { keys: [pub] });
});
