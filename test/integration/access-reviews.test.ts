import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { startServer, type Client, type TestServer } from '../helpers/server.js';

/**
 * Access reviews end to end (docs/access-reviews.md), on whichever database the run uses:
 * open (items with holder, role, last use and the unused finding), decide (keep, shorten,
 * remove, each applied to the binding and recorded with a CloudEvent queued), the due time
 * applying the default (the worker's tick driven with a time, two at once claiming once),
 * schedules, what a caller who sees part of the tree sees, and the attacks: an invisible
 * review, a remove the caller could not make directly, its own binding, a due date out of
 * range, a huge reason, a review too large.
 */
let s: TestServer;
let org: string;
let team: string;
let sub: string;
let sibling: string;
const R = '/iam/v2beta1/accessReviews';
const DAY = 86_400_000;
const VIEWER = builtinRoleUid('viewer');
const EDITOR = builtinRoleUid('editor');
const OWNER = builtinRoleUid('owner');

const ids: Record<string, string> = {};
const bindings: Record<string, string> = {};
const as: Record<string, Client> = {};

async function person(name: string, at: string, role: string): Promise<void> {
  ids[name] = await createIdentity(s.admin, org, name);
  bindings[name] = await createBinding(s.admin, at, ids[name]!, role);
  const token = (await s.arbor.tokens.sign(ids[name]!, { iss: ISSUER, sub: `sub-${name}` })).token;
  as[name] = s.client(token);
}

const inDays = (n: number) => new Date(Date.now() + n * DAY).toISOString();

async function open(c: Client, group: string, body: Record<string, unknown>) {
  return c.post(`${R}/${group}`, body);
}

async function items(c: Client, review: string, extra = '') {
  const res = await c.get(`${R}:items?review=${review}&page_size=100${extra}`);
  return res;
}

async function itemOf(review: string, bindingUid: string) {
  const res = await items(s.admin, review);
  return (res.body.items as Array<{ uid: string; bindingUid: string }>).find(
    (i) => i.bindingUid === bindingUid,
  )!;
}

test.before(async () => {
  s = await startServer({ LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' });
  org = await createGroup(s.admin, 'reviews-org');
  team = await createGroup(s.admin, 'team', org);
  sub = await createGroup(s.admin, 'sub', team);
  sibling = await createGroup(s.admin, 'sibling', org);
  // A subscriber at the top: every record of the tree queues one CloudEvent.
  const subscription = await s.admin.post(`/events/v2beta1/subscriptions/${org}`, {
    name: 'siem',
    sink: 'https://siem.example.com/arbor',
  });
  if (subscription.status !== 200) throw new Error(JSON.stringify(subscription.body));
  const partial = await createRole(s.admin, org, 'group-reader', ['groups.list']);
  const weak = await createRole(s.admin, org, 'weak-reviewer', [
    'groups.list',
    'identity.list',
    'roles.list',
    'role_bindings.list',
    'role_bindings.update',
  ]);
  await person('owner', team, OWNER);
  await person('bot1', team, VIEWER);
  await person('bot2', sub, VIEWER);
  await person('bot3', team, EDITOR);
  await person('bot4', sub, EDITOR);
  await person('orgbot', org, VIEWER);
  await person('subowner', sub, OWNER);
  await person('partial', team, partial);
  await person('weak', team, weak);
  await person('outsider', sibling, OWNER);
  // The subowner also sees the team itself (not its bindings): a caller who sees part.
  await createBinding(s.admin, team, ids.subowner!, partial);
  // bot1 last used its binding an hour ago; bot3's binding is old and never used.
  await s.db.knex('binding_usage').insert({
    binding_uid: bindings.bot1,
    last_used_at: new Date(Date.now() - 3600_000),
  });
  await s.db
    .knex('role_bindings')
    .where('uid', bindings.bot3)
    .update({ created_at: new Date(Date.now() - 100 * DAY) });
});
test.after.always(async () => {
  await s?.close();
});

test.serial(
  'open: one item per live binding at and below the group, with holder, role, last use and the unused finding',
  async (t) => {
    const res = await open(as.owner!, team, { dueTime: inDays(14), defaultDecision: 'keep' });
    t.is(res.status, 200, JSON.stringify(res.body));
    t.like(res.body, {
      groupUid: team,
      state: 'OPEN',
      defaultDecision: 'keep',
      openedBy: ids.owner,
    });
    const review = res.body.uid as string;
    t.true(review.startsWith(`${team}/`));
    const listed = await items(as.owner!, review);
    t.is(listed.status, 200, JSON.stringify(listed.body));
    const byBinding = new Map(
      (listed.body.items as Array<Record<string, any>>).map((i) => [i.bindingUid, i]),
    );
    // owner, bot1..4, subowner (twice: sub and team), partial, weak; not orgbot nor outsider.
    t.is(res.body.itemCount, 9);
    t.is(listed.body.items.length, 9);
    t.false(byBinding.has(bindings.orgbot));
    t.false(byBinding.has(bindings.outsider));
    t.like(byBinding.get(bindings.bot1), {
      holder: { uid: ids.bot1, name: 'bot1' },
      role: { uid: VIEWER, name: 'viewer' },
      groupUid: team,
      unused: false,
    });
    t.truthy(byBinding.get(bindings.bot1)!.lastUsedTime);
    t.like(byBinding.get(bindings.bot3), { unused: true });
    t.is(byBinding.get(bindings.bot3)!.lastUsedTime, undefined);
    t.like(byBinding.get(bindings.bot2), { groupUid: sub, unused: false });
    // Its Get and List answer the same review; the open is audited.
    t.like((await as.owner!.get(`${R}/${review}`)).body, { uid: review, itemCount: 9 });
    const all = await as.owner!.get(`${R}?uidp.children_of=${team}`);
    t.true((all.body.accessReviews as Array<{ uid: string }>).some((r) => r.uid === review));
    const rec = await s.db
      .knex('audit_events')
      .where({ resource_uid: review, operation: 'create' });
    t.is(rec.length, 1);
  },
);

test.serial(
  'decide: keep, shorten and remove are applied to the bindings, each recorded with its CloudEvent',
  async (t) => {
    const review = (await open(s.admin, team, { dueTime: inDays(7), defaultDecision: 'keep' })).body
      .uid as string;
    const keep = await itemOf(review, bindings.bot1!);
    const shorten = await itemOf(review, bindings.bot2!);
    const remove = await itemOf(review, bindings.bot4!);
    const k1 = await as.owner!.post(`${R}:decide`, {
      itemUid: keep.uid,
      decision: 'keep',
      reason: 'still deploys',
    });
    t.is(k1.status, 200, JSON.stringify(k1.body));
    t.like(k1.body, { decision: 'keep', reason: 'still deploys', decidedBy: ids.owner });
    const until = inDays(3);
    const s1 = await as.owner!.post(`${R}:decide`, {
      itemUid: shorten.uid,
      decision: 'shorten',
      expireTime: until,
      reason: 'only for the migration',
    });
    t.is(s1.status, 200, JSON.stringify(s1.body));
    const b2 = await s.admin.get(`/iam/v2beta1/roleBindings/${bindings.bot2}`);
    t.is(new Date(b2.body.expireTime as string).getTime(), new Date(until).getTime());
    const r1 = await as.owner!.post(`${R}:decide`, {
      itemUid: remove.uid,
      decision: 'remove',
      reason: 'left the team',
    });
    t.is(r1.status, 200, JSON.stringify(r1.body));
    t.is((await s.admin.get(`/iam/v2beta1/roleBindings/${bindings.bot4}`)).status, 404);
    // A second decision of one item is refused; the review counts three.
    const again = await as.owner!.post(`${R}:decide`, {
      itemUid: keep.uid,
      decision: 'remove',
      reason: 'changed my mind',
    });
    t.is(again.status, 400);
    t.is(again.body.details[1].violations[0].type, 'ALREADY_DECIDED');
    t.like((await s.admin.get(`${R}/${review}`)).body, { decidedCount: 3, state: 'OPEN' });
    // Each decision is a record (and a queued CloudEvent); each binding change names its item.
    const k = s.db.knex;
    const decided = await k('audit_events as a')
      .whereIn('a.resource_uid', [keep.uid, shorten.uid, remove.uid])
      .select('a.event_type', 'a.actor')
      .select(
        k.raw('(SELECT count(*)::int FROM event_outbox o WHERE o.event_seq = a.seq) AS queued'),
      );
    t.is(decided.length, 3);
    for (const d of decided) {
      t.is(d.event_type, 'dev.arbor.iam.access_review_item.updated.v1');
      t.is(d.actor, `identity:${ids.owner}`);
      t.is(d.queued, 1);
    }
    const changed = (await k('audit_events')
      .whereIn('resource_uid', [bindings.bot2!, bindings.bot4!])
      .whereIn('operation', ['update', 'delete'])
      .select('resource_uid', 'operation', 'cause')) as Array<{
      cause: unknown;
      operation: string;
    }>;
    t.is(changed.length, 2);
    for (const c of changed) {
      const cause = (typeof c.cause === 'string' ? JSON.parse(c.cause) : c.cause) as {
        reason: string;
        resourceType: string;
      };
      t.like(cause, { reason: 'ACCESS_REVIEW', resourceType: 'iam.arbor.dev/AccessReviewItem' });
    }
    // Put bot4's binding back for the tests after.
    bindings.bot4 = await createBinding(s.admin, sub, ids.bot4!, EDITOR);
  },
);

test.serial(
  'due date: the default expires the undecided, once, whichever worker claims it',
  async (t) => {
    const review = (await open(s.admin, sub, { dueTime: inDays(1), defaultDecision: 'expire' }))
      .body.uid as string;
    const kept = await itemOf(review, bindings.bot4!);
    t.is(
      (
        await s.admin.post(`${R}:decide`, {
          itemUid: kept.uid,
          decision: 'keep',
          reason: 'needed',
        })
      ).status,
      200,
    );
    const at = Date.now() + 2 * DAY;
    // Two ticks at once (two replicas): the review is defaulted by exactly one.
    const svc = s.arbor.services.accessReviews;
    const [x, y] = await Promise.all([svc.tick(at), svc.tick(at)]);
    t.is(x.defaulted + y.defaulted, 1);
    const after = await s.admin.get(`${R}/${review}`);
    t.like(after.body, { state: 'DEFAULTED', decidedCount: after.body.itemCount });
    // bot2's binding (undecided) now ends at the tick; bot4's (kept) does not.
    const b2 = await s.admin.get(`/iam/v2beta1/roleBindings/${bindings.bot2}`);
    t.true(new Date(b2.body.expireTime as string).getTime() <= at);
    const b4 = await s.admin.get(`/iam/v2beta1/roleBindings/${bindings.bot4}`);
    t.is(b4.body.expireTime, undefined);
    const rest = await items(s.admin, review, '&decision=shorten');
    t.true(rest.body.items.length >= 1);
    for (const i of rest.body.items) t.is(i.decidedBy, 'system:access-review-default');
    const rec = await s.db
      .knex('audit_events')
      .where({ resource_uid: review, operation: 'update', actor: 'system:access-review-default' });
    t.is(rec.length, 1);
    // A decision after the due time is refused.
    const late = await s.admin.post(`${R}:decide`, {
      itemUid: rest.body.items[0].uid,
      decision: 'keep',
      reason: 'late',
    });
    t.is(late.status, 400);
  },
);

test.serial(
  'schedule: the worker opens the next review when due, and only once per period',
  async (t) => {
    const set = await as.owner!.post(`${R}:setSchedule`, {
      groupUid: sub,
      everyDays: 30,
      dueInDays: 7,
      defaultDecision: 'keep',
    });
    t.is(set.status, 200, JSON.stringify(set.body));
    const svc = s.arbor.services.accessReviews;
    const count = async () =>
      (
        await s.db
          .knex('access_reviews')
          .where({ parent_uid: sub, opened_by: 'system:access-review-schedule' })
      ).length;
    const now = Date.now() + 1000;
    t.is((await svc.tick(now)).opened, 1);
    t.is((await svc.tick(now)).opened, 0);
    t.is(await count(), 1);
    t.is((await svc.tick(now + 31 * DAY)).opened, 1);
    t.is(await count(), 2);
    const got = await as.partial!.post(`${R}:getSchedule`, { groupUid: sub });
    t.like(got.body, { everyDays: 30, dueInDays: 7, setBy: ids.owner });
    // Removing it takes what setting it takes.
    t.is((await as.weak!.post(`${R}:setSchedule`, { groupUid: sub, everyDays: 0 })).status, 403);
    t.is((await as.owner!.post(`${R}:setSchedule`, { groupUid: sub, everyDays: 0 })).status, 200);
  },
);

test.serial(
  'visibility: a caller who sees part of the tree sees only its items; an outsider sees no review',
  async (t) => {
    const review = (await open(s.admin, team, { dueTime: inDays(7), defaultDecision: 'keep' })).body
      .uid as string;
    // subowner lists bindings at sub only: only sub's items.
    const seen = await items(as.subowner!, review);
    t.is(seen.status, 200, JSON.stringify(seen.body));
    t.true(seen.body.items.length > 0);
    for (const i of seen.body.items) t.is(i.groupUid, sub);
    const teamItem = await itemOf(review, bindings.bot1!);
    const hidden = await as.subowner!.post(`${R}:decide`, {
      itemUid: teamItem.uid,
      decision: 'remove',
      reason: 'not mine to see',
    });
    t.is(hidden.status, 404);
    // The outsider: no review, no items, no decision, no list entry.
    t.is((await as.outsider!.get(`${R}/${review}`)).status, 404);
    t.is((await items(as.outsider!, review)).status, 404);
    const forged = await as.outsider!.post(`${R}:decide`, {
      itemUid: teamItem.uid,
      decision: 'remove',
      reason: 'attack',
    });
    t.is(forged.status, 404);
    t.is((await s.admin.get(`/iam/v2beta1/roleBindings/${bindings.bot1}`)).status, 200);
    const listed = await as.outsider!.get(R);
    t.false((listed.body.accessReviews as Array<{ uid: string }>).some((r) => r.uid === review));
    // Opening takes role_bindings.update and .delete: the partial reader may not.
    t.is(
      (await open(as.partial!, team, { dueTime: inDays(7), defaultDecision: 'keep' })).status,
      403,
    );
    t.is(
      (await open(as.outsider!, team, { dueTime: inDays(7), defaultDecision: 'keep' })).status,
      404,
    );
  },
);

test.serial(
  'attacks: a remove the caller could not make, its own binding, out-of-range dates, a huge reason',
  async (t) => {
    const review = (await open(s.admin, team, { dueTime: inDays(7), defaultDecision: 'keep' })).body
      .uid as string;
    const item = await itemOf(review, bindings.bot1!);
    // weak may update bindings but not delete them: no remove through a review either.
    const denied = await as.weak!.post(`${R}:decide`, {
      itemUid: item.uid,
      decision: 'remove',
      reason: 'try',
    });
    t.is(denied.status, 403);
    t.is((await s.admin.get(`/iam/v2beta1/roleBindings/${bindings.bot1}`)).status, 200);
    t.like((await s.admin.get(`${R}/${review}`)).body, { decidedCount: 0 });
    // Nobody decides their own binding.
    const own = await itemOf(review, bindings.owner!);
    const self = await as.owner!.post(`${R}:decide`, {
      itemUid: own.uid,
      decision: 'keep',
      reason: 'I am fine',
    });
    t.is(self.status, 403);
    // A shorten may not extend, nor reach past a year.
    const far = await as.owner!.post(`${R}:decide`, {
      itemUid: item.uid,
      decision: 'shorten',
      expireTime: inDays(400),
      reason: 'x',
    });
    t.is(far.status, 400);
    t.is(far.body.details[1].fieldViolations[0].field, 'expireTime');
    const huge = await as.owner!.post(`${R}:decide`, {
      itemUid: item.uid,
      decision: 'keep',
      reason: 'x'.repeat(5000),
    });
    t.is(huge.status, 400);
    t.is(huge.body.details[1].fieldViolations[0].field, 'reason');
    for (const dueTime of [inDays(366), inDays(-1), '99999-01-01T00:00:00Z', 'soon']) {
      const bad = await open(as.owner!, team, { dueTime, defaultDecision: 'keep' });
      t.is(bad.status, 400, dueTime);
      t.is(bad.body.details[1].fieldViolations[0].field, 'dueTime');
    }
    const noDefault = await open(as.owner!, team, {
      dueTime: inDays(3),
      defaultDecision: 'delete',
    });
    t.is(noDefault.status, 400);
  },
);

test.serial(
  'bounds: a review of more than 10,000 bindings is refused, and a group holds at most 3 open',
  async (t) => {
    const big = await createGroup(s.admin, 'big', org);
    await s.db.knex.raw(
      `INSERT INTO identities (uid, parent_uid, name, claim_match)
       SELECT ? || '/' || lpad(to_hex(g), 16, '0'), ?, 'bulk-' || g,
              '{"issuer": "https://issuer.example.com", "subject": "bulk"}'::jsonb
         FROM generate_series(1, 10001) g`,
      [big, big],
    );
    await s.db.knex.raw(
      `INSERT INTO role_bindings (uid, parent_uid, identity_uid, role_uid)
       SELECT ? || '/' || lpad(to_hex(g + 65536), 16, '0'), ?,
              ? || '/' || lpad(to_hex(g), 16, '0'), ?
         FROM generate_series(1, 10001) g`,
      [big, big, big, VIEWER],
    );
    const res = await open(s.admin, big, { dueTime: inDays(3), defaultDecision: 'keep' });
    t.is(res.status, 400, JSON.stringify(res.body));
    t.is(res.body.details[1].violations[0].type, 'REVIEW_TOO_LARGE');
    t.is(await s.db.knex('access_reviews').where({ parent_uid: big }).first(), undefined);
    const small = await createGroup(s.admin, 'small', org);
    for (let i = 0; i < 3; i++)
      t.is(
        (await open(s.admin, small, { dueTime: inDays(3), defaultDecision: 'keep' })).status,
        200,
      );
    const fourth = await open(s.admin, small, { dueTime: inDays(3), defaultDecision: 'keep' });
    t.is(fourth.status, 400);
    t.is(fourth.body.details[1].violations[0].type, 'TOO_MANY_OPEN_REVIEWS');
  },
);

test.serial(
  'items name the holder, role and group by path, as far as the caller may list each',
  async (t) => {
    const res = await open(s.admin, sub, { dueTime: inDays(7), defaultDecision: 'keep' });
    t.is(res.status, 200, JSON.stringify(res.body));
    const byBinding = async (c: Client) =>
      new Map(((await items(c, res.body.uid)).body.items as any[]).map((i) => [i.bindingUid, i]));
    const all = await byBinding(s.admin);
    t.like(all.get(bindings.bot2!), {
      holderPath: 'reviews-org/bot2',
      rolePath: 'viewer',
      groupPath: 'reviews-org/team/sub',
    });
    // The team's owner may not list the org's identities: no holder path; the group's
    // starts at its view.
    const owners = await byBinding(as.owner!);
    const bot2 = owners.get(bindings.bot2!)!;
    t.false('holderPath' in bot2);
    t.is(bot2.groupPath, 'team/sub');
    t.is(bot2.rolePath, 'viewer');
  },
);
