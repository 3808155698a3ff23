import test from 'ava';
import { parseMask, resolvePatch, type UpdateSpec } from '../../src/core/field-mask.js';
import { RpcError } from '../../src/core/rpc-error.js';

const spec: UpdateSpec = {
  mutable: { name: '', description: '', claimMatch: null },
  outputOnly: ['uid', 'createTime'],
};

test('mask: without a mask only the fields present change', (t) => {
  t.deepEqual(resolvePatch({ description: 'x', uid: 'ignored' }, undefined, spec), {
    description: 'x',
  });
});

test('mask: with a mask other body fields are ignored and absent masked fields reset', (t) => {
  t.deepEqual(resolvePatch({ name: 'n', description: 'd' }, ['description'], spec), {
    description: 'd',
  });
  t.deepEqual(resolvePatch({ name: 'n' }, ['description'], spec), { description: '' });
});

test('mask: snake_case paths are accepted', (t) => {
  t.deepEqual(resolvePatch({ claimMatch: { issuer: 'i' } }, ['claim_match'], spec), {
    claimMatch: { issuer: 'i' },
  });
});

test('mask: * replaces every mutable field', (t) => {
  t.deepEqual(resolvePatch({ name: 'n' }, ['*'], spec), {
    name: 'n',
    description: '',
    claimMatch: null,
  });
});

test('mask: unknown and output-only paths are INVALID_ARGUMENT on update_mask', (t) => {
  for (const mask of [['nope'], ['uid'], ['*', 'name']]) {
    const e = t.throws(() => resolvePatch({}, mask, spec), { instanceOf: RpcError });
    t.is(e?.code, 3);
    t.regex(e?.message ?? '', /^Invalid argument: update_mask: /);
  }
});

test('mask: an unknown body field is refused rather than silently dropped', (t) => {
  const e = t.throws(() => resolvePatch({ descripton: 'typo' }, undefined, spec), {
    instanceOf: RpcError,
  });
  t.is(e?.message, 'Invalid argument: descripton: unknown field');
});

test('mask: parseMask splits commas and repeated values', (t) => {
  t.deepEqual(parseMask('a, b'), ['a', 'b']);
  t.deepEqual(parseMask(['a', 'b,c']), ['a', 'b', 'c']);
  t.is(parseMask(undefined), undefined);
});
