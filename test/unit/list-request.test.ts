import test from 'ava';
import { parseListRequest, type ListSpec } from '../../src/core/list-request.js';
import type { RpcError } from '../../src/core/rpc-error.js';

const spec: ListSpec = {
  kind: 'groups',
  orderBy: ['uid', 'name', 'created_at'],
  defaultOrder: { field: 'uid', direction: 'asc' },
  filters: { name: 'string', identity: 'uid' },
};
const root = 'a'.repeat(40);

function violations(params: Record<string, string | string[]>) {
  const e = (() => {
    try {
      parseListRequest(params, spec);
    } catch (err) {
      return err as RpcError;
    }
    return undefined;
  })();
  const br = e?.details.find((d) => d['@type'].endsWith('BadRequest')) as
    { fieldViolations: Array<{ field: string }> } | undefined;
  return br?.fieldViolations.map((v) => v.field) ?? [];
}

test('list request: defaults are page 50, uid order, no skip', (t) => {
  const r = parseListRequest({}, spec);
  t.is(r.pageSize, 50);
  t.deepEqual(r.orderBy, { field: 'uid', direction: 'asc' });
  t.is(r.skip, 0);
});

test('list request: page_size above 200 is coerced to 200', (t) => {
  t.is(parseListRequest({ page_size: '5000' }, spec).pageSize, 200);
});

test('list request: negative or non-numeric page_size and skip are refused', (t) => {
  t.deepEqual(violations({ page_size: '-1' }), ['page_size']);
  t.deepEqual(violations({ page_size: 'ten' }), ['page_size']);
  t.deepEqual(violations({ skip: '-3' }), ['skip']);
  t.deepEqual(violations({ skip: '1.5' }), ['skip']);
});

test('list request: order_by is allow-listed and takes asc or desc', (t) => {
  t.deepEqual(parseListRequest({ order_by: 'name desc' }, spec).orderBy, {
    field: 'name',
    direction: 'desc',
  });
  t.deepEqual(parseListRequest({ orderBy: 'created_at' }, spec).orderBy, {
    field: 'created_at',
    direction: 'asc',
  });
  t.deepEqual(violations({ order_by: 'password' }), ['order_by']);
  t.deepEqual(violations({ order_by: 'name sideways' }), ['order_by']);
  t.deepEqual(violations({ order_by: 'name; drop table groups' }), ['order_by']);
});

test('list request: uidp filters must be uid paths and unknown parameters are refused', (t) => {
  t.is(parseListRequest({ 'uidp.descendants_of': root }, spec).uidp.descendantsOf, root);
  t.is(parseListRequest({ 'uidp.childrenOf': root }, spec).uidp.childrenOf, root);
  t.deepEqual(violations({ 'uidp.children_of': 'nope' }), ['uidp.children_of']);
  t.deepEqual(violations({ colour: 'red' }), ['colour']);
  t.deepEqual(violations({ identity: 'x' }), ['identity']);
  t.deepEqual(violations({ name: ['a', 'b'] }), ['name']);
});
