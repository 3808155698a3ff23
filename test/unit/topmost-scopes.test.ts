import test from 'ava';
import { topmostScopes } from '../../src/core/visibility.js';

/** The groups list's `top_level` answers these for a caller who sees scopes. */
const org = 'a'.repeat(40);
const other = 'b'.repeat(40);
const f = `${org}/${'1'.repeat(16)}`;
const g = `${f}/${'2'.repeat(16)}`;
const h = `${org}/${'3'.repeat(16)}`;
/** A sibling whose uid merely starts with f's characters is not below f. */
const lookalike = `${org}/${'1'.repeat(15)}0`;

test('topmost scopes: none of them below another, each once', (t) => {
  t.deepEqual(topmostScopes([]), []);
  t.deepEqual(topmostScopes([g, f, h, f]).sort(), [f, h].sort());
  t.deepEqual(topmostScopes([g, lookalike]).sort(), [g, lookalike].sort());
  t.deepEqual(topmostScopes([g, f, org, other]).sort(), [org, other].sort());
});
