import test from 'ava';
import { closestNames, editDistance } from '../../src/cli/name-suggestions.js';

test('edit distance counts an insertion, a deletion, a substitution and a swap as one', (t) => {
  t.is(editDistance('acme', 'acme'), 0);
  t.is(editDistance('acme', 'acmes'), 1);
  t.is(editDistance('acme', 'acm'), 1);
  t.is(editDistance('acme', 'acne'), 1);
  t.is(editDistance('acem', 'acme'), 1);
  t.is(editDistance('platfrom', 'platform'), 1);
  t.is(editDistance('', 'abc'), 3);
  t.is(editDistance('kitten', 'sitting'), 3);
});

test('closest names: near ones first, prefixes after, nothing far', (t) => {
  t.deepEqual(closestNames('editr', ['viewer', 'editor', 'owner']), ['editor']);
  t.deepEqual(closestNames('plat', ['platform', 'plan', 'data']), ['plan', 'platform']);
  t.deepEqual(closestNames('zzzzzz', ['acme', 'platform']), []);
  t.deepEqual(closestNames('acme', ['acme']), [], 'the name itself is no suggestion');
  t.is(closestNames('a', ['b', 'c', 'd', 'e']).length, 3, 'at most three');
});
