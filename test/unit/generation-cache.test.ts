import test from 'ava';
import { GenerationCache } from '../../src/db/generation-cache.js';

/**
 * The embedded database's cache (db/generation-cache.ts): a value is served only until this
 * process's next transaction ends, and a load that one overlapped is answered but not kept.
 * The generation here is a counter the test moves, as the unit of work moves its own.
 */
test('served until the next transaction; a load overlapped by one is not kept', async (t) => {
  let generation = 0;
  let reads = 0;
  const cache = new GenerationCache<string>(() => generation);
  const load = () => Promise.resolve(`value ${++reads}`);
  t.is(await cache.read('k', load), 'value 1');
  t.is(await cache.read('k', load), 'value 1', 'kept');
  t.deepEqual(cache.peek('k'), { value: 'value 1', generation: 0 });
  generation++;
  t.is(cache.peek('k'), undefined, 'a transaction ended: nothing kept is served');
  t.is(await cache.read('k', load), 'value 2');
  // A transaction ends while a load is in flight: its answer may predate the change.
  const overlapped = cache.read('j', () => {
    generation++;
    return Promise.resolve('read before the change');
  });
  t.is(await overlapped, 'read before the change', 'answered');
  t.is(cache.peek('j'), undefined, 'but not kept');
  t.deepEqual(cache.stats, { hits: 2, misses: 3, bypassed: 0 });
});
