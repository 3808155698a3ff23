import test from 'ava';
import { AccessReviewsService } from '../../src/gen/arbor/iam/v2beta1/access_reviews_pb.js';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';

/**
 * Access reviews over gRPC answer as REST does (access-reviews.test.ts has the rules; this
 * checks the door): open, list items, decide, and the schedule, with the same refusals.
 */
let s: GrpcTestServer;
let team: string;
let owner: string;
let outsider: string;
let botBinding: string;

test.before(async () => {
  s = await startGrpcServer();
  const org = await createGroup(s.admin, 'grpc-reviews');
  team = await createGroup(s.admin, 'team', org);
  const other = await createGroup(s.admin, 'other', org);
  const o = await createIdentity(s.admin, org, 'owner');
  const x = await createIdentity(s.admin, org, 'outsider');
  const bot = await createIdentity(s.admin, org, 'bot');
  await createBinding(s.admin, team, o, builtinRoleUid('owner'));
  await createBinding(s.admin, other, x, builtinRoleUid('owner'));
  botBinding = await createBinding(s.admin, team, bot, builtinRoleUid('viewer'));
  owner = (await s.arbor.tokens.sign(o, { iss: ISSUER, sub: 'sub-owner' })).token;
  outsider = (await s.arbor.tokens.sign(x, { iss: ISSUER, sub: 'sub-outsider' })).token;
});
test.after.always(async () => {
  await s?.close();
});

test('open, items, decide and the schedule over gRPC answer as REST does', async (t) => {
  const c = s.grpc(owner);
  const due = new Date(Date.now() + 7 * 86_400_000).toISOString();
  const made = await c.call(AccessReviewsService, 'CreateAccessReview', {
    parent: team,
    accessReview: { dueTime: due, defaultDecision: 'keep', state: 'COMPLETED' },
  });
  t.true(made.ok, JSON.stringify(made));
  if (!made.ok) return;
  t.is(made.json.state, 'OPEN');
  const rest = await s.client(owner).get(`/iam/v2beta1/accessReviews/${made.json.uid}`);
  const got = await c.call(AccessReviewsService, 'GetAccessReview', { uid: made.json.uid });
  t.true(got.ok && got.json.uid === rest.body.uid);
  const items = await c.call(AccessReviewsService, 'ListAccessReviewItems', {
    review: made.json.uid,
  });
  t.true(items.ok, JSON.stringify(items));
  if (!items.ok) return;
  const item = items.json.items.find((i: any) => i.bindingUid === botBinding);
  t.truthy(item);
  const far = await c.call(AccessReviewsService, 'DecideAccessReviewItem', {
    itemUid: item.uid,
    decision: 'shorten',
    reason: 'too far',
    expireTime: new Date(Date.now() + 400 * 86_400_000).toISOString(),
  });
  t.is(far.code, 3);
  const x = s.grpc(outsider);
  const forged = await x.call(AccessReviewsService, 'DecideAccessReviewItem', {
    itemUid: item.uid,
    decision: 'remove',
    reason: 'attack',
  });
  t.is(forged.code, 5);
  const ok = await c.call(AccessReviewsService, 'DecideAccessReviewItem', {
    itemUid: item.uid,
    decision: 'remove',
    reason: 'not needed',
  });
  t.true(ok.ok, JSON.stringify(ok));
  if (ok.ok) t.like(ok.json, { decision: 'remove', reason: 'not needed' });
  t.is((await s.admin.get(`/iam/v2beta1/roleBindings/${botBinding}`)).status, 404);
  const set = await c.call(AccessReviewsService, 'SetAccessReviewSchedule', {
    groupUid: team,
    everyDays: 90,
    dueInDays: 14,
  });
  t.true(set.ok, JSON.stringify(set));
  const sched = await c.call(AccessReviewsService, 'GetAccessReviewSchedule', { groupUid: team });
  t.true(sched.ok && sched.json.everyDays === 90 && sched.json.defaultDecision === 'keep');
  t.is((await x.call(AccessReviewsService, 'GetAccessReviewSchedule', { groupUid: team })).code, 5);
  c.close();
  x.close();
});
