import test from 'ava';
import { createIdentity, fields } from '../helpers/iam-fixtures.js';
import type { TestServer } from '../helpers/server.js';
import {
  startTwoWorkers,
  untilWallClock as until,
  type TwoWorkers,
} from '../helpers/two-workers.js';

/**
 * Scheduled grants (`notBefore`), mirroring binding-expiry.test.ts: validated at create,
 * shown on the binding, and granting from their instant on every worker, even one whose
 * grant cache remembered the identity's grants before the start.
 */
/** Two Arbor instances over one database: two workers, each with its own grant cache. */
let a: TestServer;
let b: TestServer;
let org: string;
let reader: string;
const B = '/iam/v2beta1/roleBindings';

let w: TwoWorkers | undefined;

/**
 * Both workers' authorizers' now: the wall clock, or, while `heldAt` is set, that instant.
 * Held just before a start, "denied before its start" is decided for certain, however
 * slow the machine (the wall clock may have passed the start by then).
 */
let heldAt: number | undefined;
const clock = () => heldAt ?? Date.now();

test.before(async () => {
  w = await startTwoWorkers('scheduled-org', {}, clock);
  ({ a, b, org, reader } = w);
});
test.after.always(() => w?.close());

const tokenFor = (s: TestServer, uid: string, name: string) => w!.tokenFor(s, uid, name);

const iso = (ms: number) => new Date(ms).toISOString();

test.serial(
  'notBefore: validated, before expireTime, set once, shown on the binding',
  async (t) => {
    const id = await createIdentity(a.admin, org, 'validated');
    const garbage = await a.admin.post(`${B}/${org}`, {
      identityUid: id,
      roleUid: reader,
      notBefore: 'next week',
    });
    t.is(garbage.status, 400);
    t.deepEqual(fields(garbage.body), ['notBefore']);
    const start = Date.now() + 3_600_000;
    for (const end of [start, start - 1]) {
      const inverted = await a.admin.post(`${B}/${org}`, {
        identityUid: id,
        roleUid: reader,
        notBefore: iso(start),
        expireTime: iso(end),
      });
      t.is(inverted.status, 400, 'an empty window is refused');
      t.deepEqual(fields(inverted.body), ['notBefore']);
    }
    const ok = await a.admin.post(`${B}/${org}`, {
      identityUid: id,
      roleUid: reader,
      notBefore: iso(start),
      expireTime: iso(start + 1),
    });
    t.is(ok.status, 200);
    t.is(new Date(ok.body.notBefore).getTime(), start);
    t.true(ok.body.pending);
    t.false(ok.body.expired);
    const moved = await a.admin.patch(`${B}/${ok.body.uid}?updateMask=notBefore`, {
      notBefore: iso(start + 60_000),
    });
    t.is(moved.status, 400, 'a start is set once, at create');
    // Server-owned: `pending` in a body is ignored, never stored.
    const echoed = await a.admin.post(`${B}/${org}`, {
      identityUid: await createIdentity(a.admin, org, 'echo'),
      roleUid: reader,
      pending: true,
    });
    t.is(echoed.status, 200);
    t.is(echoed.body.pending, undefined);
    t.is(echoed.body.notBefore, undefined);
  },
);

test.serial(
  'start: from notBefore on, every worker grants, even from a grant cache warmed before it',
  async (t) => {
    const id = await createIdentity(a.admin, org, 'scheduled');
    const startAt = Date.now() + 1_500;
    const created = await a.admin.post(`${B}/${org}`, {
      identityUid: id,
      roleUid: reader,
      notBefore: iso(startAt),
    });
    t.is(created.status, 200);
    const onA = a.client(await tokenFor(a, id, 'scheduled'));
    const onB = b.client(await tokenFor(b, id, 'scheduled'));
    const ask = () =>
      b.admin.post('/iam/v2beta1/access:check', {
        identityUid: id,
        capability: 'groups.list',
        groupUid: org,
      });
    // Warm both workers' grant caches before the start, their authorizers held 1 ms before
    // it: they remember the scheduled grant, which must not grant yet, and must grant at its
    // instant (warmed within the one-second cache's reach of the start).
    await until(startAt - 600);
    heldAt = startAt - 1;
    try {
      t.is(
        (await onA.get(`/iam/v2beta1/groups/${org}`)).status,
        404,
        'a: granted before its start',
      );
      t.is(
        (await onB.get(`/iam/v2beta1/groups/${org}`)).status,
        404,
        'b: granted before its start',
      );
    } finally {
      heldAt = undefined;
    }
    // Check and who-can read a binding's window against the database's and the wall
    // clock's now, not the authorizer's: their "not yet" is asserted on a start an hour
    // off, certain on any machine.
    const later = await createIdentity(a.admin, org, 'scheduled-later');
    const pending = await a.admin.post(`${B}/${org}`, {
      identityUid: later,
      roleUid: reader,
      notBefore: iso(Date.now() + 3_600_000),
    });
    t.is(pending.status, 200);
    const laterCheck = await b.admin.post('/iam/v2beta1/access:check', {
      identityUid: later,
      capability: 'groups.list',
      groupUid: org,
    });
    t.false(laterCheck.body.allowed, 'check: granted before its start');
    const who = await b.admin.get(`/iam/v2beta1/access:whoCan?group=${org}&capability=repo.list`);
    t.false(JSON.stringify(who.body).includes(later), 'who-can: a holder before its start');
    await until(startAt);
    // Well inside the caches' one second: the remembered grant carries its start.
    t.is((await onB.get(`/iam/v2beta1/groups/${org}`)).status, 200);
    t.is((await onA.get(`/iam/v2beta1/groups/${org}`)).status, 200);
    t.true((await ask()).body.allowed);
    const after = await b.admin.get(`/iam/v2beta1/access:whoCan?group=${org}&capability=repo.list`);
    t.true(JSON.stringify(after.body).includes(id), 'a holder from its start');
    const listed = await a.admin.get(`${B}?identity=${id}`);
    t.false(listed.body.roleBindings[0].pending);
  },
);

test.serial('a window: denied before, granted inside, denied 1 ms after it ends', async (t) => {
  const id = await createIdentity(a.admin, org, 'windowed');
  const startAt = Date.now() + 1_200;
  const endAt = startAt + 1_000;
  const created = await a.admin.post(`${B}/${org}`, {
    identityUid: id,
    roleUid: reader,
    notBefore: iso(startAt),
    expireTime: iso(endAt),
  });
  t.is(created.status, 200);
  const on = b.client(await tokenFor(b, id, 'windowed'));
  const get = async () => (await on.get(`/iam/v2beta1/groups/${org}`)).status;
  heldAt = startAt - 1;
  try {
    t.is(await get(), 404, 'denied before its start');
  } finally {
    heldAt = undefined;
  }
  await until(startAt);
  t.is(await get(), 200);
  await until(endAt + 1);
  t.is(await get(), 404);
});
