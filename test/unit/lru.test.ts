import test from 'ava';
import { Lru } from '../../src/core/lru.js';

test('lru: holds at most max entries and drops the least recently used first', (t) => {
  const lru = new Lru<string, number>(2);
  lru.set('a', 1).set('b', 2);
  t.is(lru.get('a'), 1, 'a is now the most recent');
  lru.set('c', 3);
  t.is(lru.size, 2);
  t.false(lru.has('b'));
  t.is(lru.get('a'), 1);
  t.is(lru.get('c'), 3);
  lru.set('a', 10);
  lru.set('d', 4);
  t.false(lru.has('c'));
  t.is(lru.get('a'), 10);
  t.throws(() => new Lru(0), { instanceOf: RangeError });
});

test('lru: a stream of distinct keys never grows it past its bound', (t) => {
  const lru = new Lru<number, number>(100);
  for (let i = 0; i < 10_000; i++) lru.set(i, i);
  t.is(lru.size, 100);
  t.true(lru.has(9_999));
  t.false(lru.has(9_899));
});
