import test from 'ava';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { RoleBindingsService } from '../../src/gen/arbor/iam/v2beta1/role_bindings_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';

/**
 * Conditional role bindings over gRPC: created with a condition (a bad one is
 * INVALID_ARGUMENT naming the field and the position), and the gRPC door's resource reads
 * decide by it as REST's do.
 */
let s: GrpcTestServer;
let org: string;
let payments: string;
let web: string;
let reader: string;

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'gcond');
  payments = await createGroup(s.admin, 'payments', org);
  web = await createGroup(s.admin, 'web', org);
  reader = await createRole(s.admin, org, 'reader', ['groups.list']);
});
test.after.always(() => s?.close());

test('create with a condition over gRPC; reads decide by it', async (t) => {
  const id = await createIdentity(s.admin, org, 'grpc-cond');
  const bad = await s.grpcAdmin.call(RoleBindingsService, 'CreateRoleBinding', {
    parent: org,
    roleBinding: { identityUid: id, roleUid: reader, condition: { expression: 'nope' } },
  });
  t.is(bad.code, 3, 'INVALID_ARGUMENT');
  t.regex(
    JSON.stringify(bad),
    /condition\.expression.*undeclared reference to 'nope' at position 0/,
  );
  const made = await s.grpcAdmin.call(RoleBindingsService, 'CreateRoleBinding', {
    parent: org,
    roleBinding: {
      identityUid: id,
      roleUid: reader,
      condition: { expression: 'resource.group.path == "gcond/payments"', title: 'payments' },
    },
  });
  t.true(made.ok, JSON.stringify(made));
  if (!made.ok) return;
  t.is(made.json.condition.expression, 'resource.group.path == "gcond/payments"');
  const token = (await s.arbor.tokens.sign(id, { iss: ISSUER, sub: 'sub-grpc-cond' })).token;
  const as = s.grpc(token);
  t.true((await as.call(GroupsService, 'GetGroup', { uid: payments })).ok);
  t.is((await as.call(GroupsService, 'GetGroup', { uid: web })).code, 5, 'NOT_FOUND');
  as.close();
});
