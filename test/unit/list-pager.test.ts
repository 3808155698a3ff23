import { randomBytes } from 'node:crypto';
import test from 'ava';
import { PageTokenCodec } from '../../src/core/page-token.js';
import type { ListRequest } from '../../src/core/list-request.js';
import { ListPager } from '../../src/resources/list-pager.js';
import type { PageQuery, StorePage } from '../../src/resources/list-types.js';

const spec = {
  kind: 'k',
  orderBy: ['uid'],
  defaultOrder: { field: 'uid', direction: 'asc' as const },
  filters: {},
};
const req: ListRequest = {
  pageSize: 1,
  orderBy: { field: 'uid', direction: 'asc' },
  skip: 0,
  uidp: {},
  filters: {},
};

function store(total: () => string) {
  const seen: PageQuery[] = [];
  const fetch = (q: PageQuery): Promise<StorePage<string>> => {
    seen.push(q);
    return Promise.resolve({ items: ['a'], nextKey: ['a'], total: q.knownTotal ?? total() });
  };
  return { seen, fetch };
}

test('pager: first pages reuse a recent count until a write or the TTL', async (t) => {
  let now = 0;
  let generation = 0;
  const pager = new ListPager(new PageTokenCodec(randomBytes(32)), {
    countTtlMs: 2000,
    writeGeneration: () => generation,
    now: () => now,
  });
  let count = 5;
  const s = store(() => String(count));
  const all = { kind: 'all' } as const;
  t.is((await pager.page(spec, req, all, s.fetch)).totalCount, '5');
  count = 6;
  t.is((await pager.page(spec, req, all, s.fetch)).totalCount, '5', 'reused within the TTL');
  generation++;
  t.is((await pager.page(spec, req, all, s.fetch)).totalCount, '6', 'a write forgets it');
  count = 7;
  now += 2000;
  t.is((await pager.page(spec, req, all, s.fetch)).totalCount, '7', 'and so does time');
  const other = { kind: 'scopes', scopes: ['x'] } as const;
  count = 8;
  t.is(
    (await pager.page(spec, req, other, s.fetch)).totalCount,
    '8',
    'another visibility counts on its own',
  );
});

test('pager: a query anchored inside the caller scope needs no visibility filter', async (t) => {
  const pager = new ListPager(new PageTokenCodec(randomBytes(32)));
  const s = store(() => '1');
  const root = 'a'.repeat(40);
  await pager.page(
    spec,
    { ...req, uidp: { descendantsOf: `${root}/0123456789abcdef` } },
    { kind: 'scopes', scopes: [root] },
    s.fetch,
  );
  t.deepEqual(s.seen[0]!.visibility, { kind: 'all' });
  await pager.page(
    spec,
    { ...req, uidp: { descendantsOf: 'b'.repeat(40) } },
    { kind: 'scopes', scopes: [root] },
    s.fetch,
  );
  t.deepEqual(s.seen[1]!.visibility, { kind: 'scopes', scopes: [root] });
});

test('pager: a maintained total is read on every page, neither shared nor carried', async (t) => {
  const pager = new ListPager(new PageTokenCodec(randomBytes(32)), { countTtlMs: 60_000 });
  let count = 5;
  const s = store(() => String(count));
  const anchored = { ...req, uidp: { childrenOf: 'a'.repeat(40) } };
  const all = { kind: 'all' } as const;
  const maintained = (q: Pick<PageQuery, 'visibility'>) => q.visibility.kind === 'all';
  const first = await pager.page(spec, anchored, all, s.fetch, maintained);
  t.is(first.totalCount, '5');
  count = 6;
  t.is((await pager.page(spec, anchored, all, s.fetch, maintained)).totalCount, '6');
  count = 7;
  const next = await pager.page(
    spec,
    { ...anchored, pageToken: first.nextPageToken! },
    all,
    s.fetch,
    maintained,
  );
  t.is(next.totalCount, '7', 'not the total carried by the token');
  t.true(s.seen.every((q) => q.knownTotal === undefined));
});

test('pager: first pages share a count only within the same count scope', async (t) => {
  const pager = new ListPager(new PageTokenCodec(randomBytes(32)), { now: () => 0 });
  let count = 1;
  const s = store(() => String(count));
  const all = { kind: 'all' } as const;
  const ask = (scope: string) => pager.page(spec, req, all, s.fetch, undefined, scope);
  t.is((await ask('alice')).totalCount, '1');
  count = 2;
  t.is((await ask('bob')).totalCount, '2', 'another caller counts on its own');
  t.is((await ask('alice')).totalCount, '1', 'the same caller shares its recent count');
});

test('pager: a shared count is not reused past the instant the store says it lapses', async (t) => {
  let now = 0;
  const pager = new ListPager(new PageTokenCodec(randomBytes(32)), { now: () => now });
  let count = 3;
  const fetch = (q: PageQuery): Promise<StorePage<string>> =>
    Promise.resolve({
      items: ['a'],
      total: q.knownTotal ?? String(count),
      // A binding it counted expires at 500.
      totalUntil: 500,
    });
  const all = { kind: 'all' } as const;
  t.is((await pager.page(spec, req, all, fetch)).totalCount, '3');
  count = 2;
  now = 499;
  t.is((await pager.page(spec, req, all, fetch)).totalCount, '3', 'still within');
  now = 500;
  t.is((await pager.page(spec, req, all, fetch)).totalCount, '2', 'counted again at expiry');
});
