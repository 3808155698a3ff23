import test from 'ava';
import { GroupsService } from '../../src/gen/arbor/iam/v2beta1/groups_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { PG_POOLER_URL, TEST_BACKEND } from '../helpers/db.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { NOT_POOLED, postgresOnly } from '../helpers/need-tool.js';

/**
 * The gRPC Get of a group the read cache holds (PostgreSQL with its change feed) answers
 * with a frame encoded once and shared between calls (grpc/unary-fast-path.ts): it must be
 * the frame of the current row, after every write, and the same answer REST gives.
 */
const serial = postgresOnly(test.serial, { when: PG_POOLER_URL === undefined, why: NOT_POOLED });

let s: GrpcTestServer;

test.before(async () => {
  if (TEST_BACKEND !== 'postgres' || PG_POOLER_URL !== undefined) return;
  s = await startGrpcServer();
});
test.after.always(async () => {
  await s?.close();
});

serial('a cached gRPC Get answers the current row after every write', async (t) => {
  const deadline = Date.now() + 10_000;
  while (!s.db.changeFeed?.fresh()) {
    if (Date.now() > deadline) throw new Error('the change feed did not come up');
    await new Promise((r) => setTimeout(r, 20));
  }
  const org = await createGroup(s.admin, 'grpc-cache-org');
  const uid = await createGroup(s.admin, 'grpc-cached', org);
  const grpc = s.grpcAdmin;
  const served = s.fastPath.served;
  const hits = s.arbor.readCaches.groups!.hits;
  for (let i = 0; i < 5; i++) {
    const w = await s.admin.patch(`/iam/v2beta1/groups/${uid}?updateMask=description`, {
      description: `v${i}`,
    });
    t.is(w.status, 200);
    for (let k = 0; k < 4; k++) {
      const r = await grpc.call(GroupsService, 'GetGroup', { uid });
      t.true(r.ok);
      t.is(r.ok && r.json.description, `v${i}`);
    }
    const rest = (await s.admin.get(`/iam/v2beta1/groups/${uid}`)).body;
    const r = await grpc.call(GroupsService, 'GetGroup', { uid });
    const { uid: u, name, description, createTime, updateTime } = rest;
    t.like(r.ok && r.json, { uid: u, name, description, createTime, updateTime });
  }
  // The calls took the fast path, and the cache answered some of them.
  t.true(s.fastPath.served - served >= 25);
  t.true(s.arbor.readCaches.groups!.hits > hits);
});
