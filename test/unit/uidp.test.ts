import test from 'ava';
import {
  ancestorsOf,
  isStrictlyBelow,
  isValidUidp,
  newChildUid,
  newRootUid,
  parentOf,
} from '../../src/core/uidp.js';

test('uidp: a root is 40 hex and a child adds 16 hex under its parent', (t) => {
  const root = newRootUid();
  t.regex(root, /^[0-9a-f]{40}$/);
  const child = newChildUid(root);
  t.regex(child, new RegExp(`^${root}/[0-9a-f]{16}$`));
  t.true(isValidUidp(child));
  t.is(parentOf(child), root);
  t.is(parentOf(root), undefined);
});

test('uidp: malformed paths are refused', (t) => {
  for (const bad of [
    '',
    'abc',
    'A'.repeat(40),
    `${'a'.repeat(40)}/`,
    `${'a'.repeat(40)}/xyz`,
    `${'a'.repeat(40)}/../x`,
    `${'a'.repeat(40)}%`,
  ]) {
    t.false(isValidUidp(bad), bad);
  }
});

test('uidp: ancestry is nearest first and strictness is by path segment', (t) => {
  const r = newRootUid();
  const a = newChildUid(r);
  const b = newChildUid(a);
  t.deepEqual(ancestorsOf(b), [a, r]);
  t.true(isStrictlyBelow(r, b));
  t.false(isStrictlyBelow(b, b));
  // A sibling whose uid merely starts with the same characters is not below.
  t.false(isStrictlyBelow(r, r + '0'));
});
