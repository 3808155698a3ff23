import test from 'ava';
import { httpStatusOf } from '../../src/core/rpc-code.js';
import { failedPrecondition, invalidArgument, notFound } from '../../src/core/rpc-error.js';

test('rpc errors: HTTP status follows the gateway mapping', (t) => {
  const expected: Array<[number, number]> = [
    [3, 400],
    [5, 404],
    [6, 409],
    [7, 403],
    [8, 429],
    [9, 400],
    [13, 500],
    [14, 503],
    [16, 401],
  ];
  for (const [code, status] of expected) t.is(httpStatusOf(code as never), status);
});

test('rpc errors: invalid argument carries ErrorInfo and BadRequest', (t) => {
  const s = invalidArgument([{ field: 'name', description: 'name is required' }]).toStatus();
  t.is(s.code, 3);
  t.is(s.message, 'Invalid argument: name: name is required');
  t.like(s.details[0], {
    '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
    reason: 'INVALID_ARGUMENT',
  });
  t.like(s.details[1], { '@type': 'type.googleapis.com/google.rpc.BadRequest' });
});

test('rpc errors: precondition failure names its violation type', (t) => {
  const s = failedPrecondition(
    'RESOURCE_NOT_EMPTY',
    'cannot delete group with child repos',
  ).toStatus();
  t.is(s.message, 'Precondition failed: cannot delete group with child repos');
  t.like(s.details[0], { reason: 'FAILED_PRECONDITION' });
  t.deepEqual((s.details[1] as { violations: unknown[] }).violations, [
    { type: 'RESOURCE_NOT_EMPTY', description: 'cannot delete group with child repos' },
  ]);
});

test('rpc errors: not found names the resource', (t) => {
  const s = notFound('iam.arbor.dev/Group', 'abc').toStatus();
  t.is(s.code, 5);
  t.like(s.details[1], {
    '@type': 'type.googleapis.com/google.rpc.ResourceInfo',
    resourceName: 'abc',
  });
});
