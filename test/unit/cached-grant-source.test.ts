import test from 'ava';
import type { Grant } from '../../src/auth/authorizer.js';
import { CachedGrantSource } from '../../src/auth/cached-grant-source.js';

function counting() {
  const source = {
    reads: 0,
    grants: [] as Grant[],
    grantsOf() {
      source.reads++;
      return Promise.resolve(source.grants);
    },
  };
  return source;
}

test('grant cache: remembers for the TTL, then asks again', async (t) => {
  let now = 0;
  const inner = counting();
  const cache = new CachedGrantSource(inner, 1000, 100, () => now);
  await cache.grantsOf('a');
  await cache.grantsOf('a');
  t.is(inner.reads, 1);
  now = 1000;
  await cache.grantsOf('a');
  t.is(inner.reads, 2);
});

test('grant cache: invalidate forgets at once', async (t) => {
  const inner = counting();
  const cache = new CachedGrantSource(inner, 60_000);
  await cache.grantsOf('a');
  inner.grants = [{ scope: 'x', capabilities: new Set(['groups.list']) }];
  cache.invalidate();
  t.deepEqual(
    (await cache.grantsOf('a')).map((g) => g.scope),
    ['x'],
  );
});

test('grant cache: a failed lookup is not remembered', async (t) => {
  let fail = true;
  const cache = new CachedGrantSource({
    grantsOf: () => (fail ? Promise.reject(new Error('db down')) : Promise.resolve([])),
  });
  await t.throwsAsync(cache.grantsOf('a'));
  fail = false;
  t.deepEqual(await cache.grantsOf('a'), []);
});
