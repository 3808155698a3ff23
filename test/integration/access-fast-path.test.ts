import test from 'ava';
import { authOf, sameFor, startParity, type Parity } from '../helpers/fast-parity.js';

/**
 * The access check and batch check (POSTs that read) and who-can and what-can (Lists) are
 * served outside Koa too (ADR 0008): every request goes to the fast path and to Koa alone,
 * and must be answered alike, as in rest-fast-reads.test.ts.
 */
let p: Parity;
test.before(async () => {
  p = await startParity('afast');
});
test.after.always(async () => {
  await p?.close();
});

const same = sameFor(() => p);
const auth = (who: string) => authOf(p, who);

const CHECK = '/iam/v2beta1/access:check';
const BATCH = '/iam/v2beta1/access:batchCheck';
const JSON_TYPE = { 'content-type': 'application/json' };

test.serial(
  'fast reads: the access check (a POST) answers as Koa does, for every caller and question',
  async (t) => {
    t.deepEqual(
      p.fast
        .routes()
        .filter(([k]) => k === 'call')
        .map(([, path]) => path)
        .sort(),
      [BATCH, CHECK],
    );
    const q = (o: Record<string, unknown>) => JSON.stringify(o);
    const questions = [
      // About yourself (no identityUid), about others, at groups seen and unseen, gone.
      q({ capability: 'groups.list', groupUid: p.ten.a }),
      q({ capability: 'groups.delete', groupUid: p.ten.a }),
      q({ identityUid: p.ten.ids['viewer@a'], capability: 'groups.list', groupUid: p.ten.a }),
      q({ identityUid: p.ten.ids['viewer@a'], capability: 'groups.list', groupUid: p.ten.b }),
      q({ identityUid: p.ten.ids['owner@b'], capability: 'groups.update', groupUid: p.ten.b }),
      q({ identityUid: p.ten.ids['owner@b'], capability: 'groups.list', groupUid: p.ten.org }),
      q({ identityUid: p.ten.ids.unbound, capability: 'groups.list', groupUid: p.ten.org }),
      q({
        identityUid: `${p.ten.a}/${'f'.repeat(16)}`,
        capability: 'groups.list',
        groupUid: p.ten.a,
      }),
      q({ capability: 'groups.list', groupUid: `${p.ten.a}/${'f'.repeat(16)}` }),
      q({ capability: 'groups.list', groupUid: '0'.repeat(40) }),
      // Bad input: fields, JSON, shapes, an empty body.
      q({ capability: 'nope', groupUid: 'Not A Uid', extra: 1 }),
      q({ groupUid: p.ten.a }),
      '{"capability": ',
      '[]',
      '"text"',
      'null',
      '',
      '   ',
    ];
    const statuses = new Set<number>();
    for (const who of Object.keys(p.tokens))
      for (const body of questions) {
        const r = await same(t, CHECK, { ...auth(who), ...JSON_TYPE }, true, 'POST', body);
        statuses.add(r.status);
      }
    // Allowed and denied answers, bad input, unseen things and bad credentials.
    t.deepEqual([...statuses].sort(), [200, 400, 401, 404]);
    // The batch form, within and past its bound.
    const batch = (n: number) =>
      q({ checks: Array(n).fill({ capability: 'groups.list', groupUid: p.ten.a }) });
    for (const who of ['admin', 'viewer@a', 'unbound', 'anonymous'])
      for (const body of [batch(2), batch(101), q({ checks: [] }), q({})])
        await same(t, BATCH, { ...auth(who), ...JSON_TYPE }, true, 'POST', body);
  },
);

test.serial(
  'fast reads: the check refuses bodies as Koa does: type, size, encoding, framing',
  async (t) => {
    const body = JSON.stringify({ capability: 'groups.list', groupUid: p.ten.a });
    const h = auth('viewer@a');
    const types = [
      'application/json',
      'application/json; charset=utf-8',
      'application/merge-patch+json',
      'APPLICATION/JSON',
      'text/plain',
      'application/x-www-form-urlencoded',
    ];
    for (const type of types)
      await same(t, CHECK, { ...h, 'content-type': type }, true, 'POST', body);
    // No Content-Type at all is read as JSON, as Koa reads it.
    await same(t, CHECK, h, true, 'POST', body);
    // Sent in two chunks without a length.
    await same(t, CHECK, { ...h, ...JSON_TYPE }, true, 'POST', body, true);
    // Past the body limit (1 MiB): refused by its declared length, before it is read.
    const big = JSON.stringify({
      capability: 'groups.list',
      groupUid: p.ten.a,
      pad: 'x'.repeat(1 << 20),
    });
    const r = await same(t, CHECK, { ...h, ...JSON_TYPE }, true, 'POST', big);
    t.is(r.status, 413);
    // A refusal of the credentials comes before the body is looked at.
    for (const who of ['anonymous', 'forged'])
      await same(t, CHECK, { ...auth(who), 'content-type': 'text/plain' }, true, 'POST', '{');
    // Compressed as koa-compress chooses (a batch answer is above the threshold).
    const many = JSON.stringify({
      checks: Array(40).fill({ capability: 'groups.list', groupUid: p.ten.a }),
    });
    for (const ae of ['gzip', 'br', 'identity'])
      await same(
        t,
        BATCH,
        { ...auth('admin'), ...JSON_TYPE, 'accept-encoding': ae },
        true,
        'POST',
        many,
      );
    // A consistency token goes into the same scope on both paths.
    await same(t, CHECK, { ...h, 'arbor-consistency-token': '0/16B3748' }, true, 'POST', body);
  },
);

test.serial('fast reads: other spellings and methods of the check are left to Koa', async (t) => {
  const body = JSON.stringify({ capability: 'groups.list', groupUid: p.ten.a });
  const h = { ...auth('admin'), ...JSON_TYPE };
  await same(t, `${CHECK}?x=1`, h, false, 'POST', body);
  await same(t, '/iam/v2beta1/access%3Acheck', h, false, 'POST', body);
  await same(t, `${CHECK}/`, h, false, 'POST', body);
  await same(t, '/IAM/v2beta1/access:check', h, false, 'POST', body);
  await same(t, CHECK, h, false, 'PUT', body);
  await same(t, CHECK, auth('admin'), false);
  await same(t, '/iam/v2beta1/access:testToken', h, false, 'POST', '{}');
  await same(t, '/iam/v2beta1/groups', h, false, 'POST', '{}');
});

test.serial(
  'fast reads: the check is counted under its route template, as Koa counts it',
  async (t) => {
    const metric = async () =>
      (await p.s.arbor.metrics.registry.getSingleMetricAsString('arbor_http_requests_total'))
        .split('\n')
        .filter((l) =>
          l.includes('{route="/iam/v2beta1/access\\\\:check",method="POST",code="200"}'),
        );
    const count = async () => Number((await metric())[0]?.split(' ').pop() ?? 0);
    const before = await count();
    const body = JSON.stringify({ capability: 'groups.list', groupUid: p.ten.a });
    await same(t, CHECK, { ...auth('viewer@a'), ...JSON_TYPE }, true, 'POST', body);
    t.is((await count()) - before, 2);
  },
);

test.serial('fast reads: who-can and what-can answer as Koa does', async (t) => {
  const lists = p.fast
    .routes()
    .filter(([k]) => k === 'list')
    .map(([, p]) => p);
  t.true(lists.includes('/iam/v2beta1/access:whoCan'));
  t.true(lists.includes('/iam/v2beta1/access:whatCan'));
  const who = '/iam/v2beta1/access:whoCan';
  const queries = [
    `?group=${p.ten.a}&capability=groups.list`,
    `?group=${p.ten.a}&capability=groups.list&page_size=1&order_by=uid%20desc`,
    `?group=${p.ten.a}&capability=groups.list&page_size=1&skip=1`,
    `?group=${p.ten.b}&capability=groups.update`,
    `?group=${p.ten.org}&capability=groups.list&uidp.children_of=${p.ten.org}`,
    `?group=${'0'.repeat(40)}&capability=groups.list`,
    `?group=${p.ten.a}&capability=nope`,
    `?group=${p.ten.a}`,
    '',
  ];
  for (const caller of ['admin', 'viewer@a', 'owner@b', 'unbound', 'anonymous'])
    for (const q of queries) await same(t, `${who}${q}`, auth(caller), true);
  const what = '/iam/v2beta1/access:whatCan';
  for (const caller of ['admin', 'viewer@a', 'owner@b', 'unbound'])
    for (const q of ['', `?identity=${p.ten.ids['viewer@a']}`, '?identity=x', '?page_size=1'])
      await same(t, `${what}${q}`, auth(caller), true);
});
