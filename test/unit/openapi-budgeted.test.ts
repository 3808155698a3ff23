import { readFileSync } from 'node:fs';
import test from 'ava';
import { BUDGETED_OPERATIONS } from '../../src/api/openapi/error-responses.js';

/**
 * A spent budget answers 429 RESOURCE_EXHAUSTED (test/integration/budgets.test.ts proves
 * it); this holds the document to it: every operation that spends a budget says so, and
 * no name in the list has drifted from an operation the document has.
 */
interface Doc {
  paths: Record<
    string,
    Record<string, { operationId: string; responses: Record<string, unknown> }>
  >;
  components: { responses: Record<string, unknown> };
}
const doc = JSON.parse(
  readFileSync(new URL('../../src/client/openapi.json', import.meta.url), 'utf8'),
) as Doc;
const operations = new Map(
  Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((o) => [o.operationId, o])),
);

test('every budgeted operation is in the document and answers 429 ResourceExhausted', (t) => {
  t.truthy(doc.components.responses.ResourceExhausted);
  for (const id of BUDGETED_OPERATIONS) {
    const op = operations.get(id);
    t.truthy(op, `${id} is an operation of the document`);
    t.deepEqual(op?.responses['429'], { $ref: '#/components/responses/ResourceExhausted' }, id);
  }
});

test('an operation that spends no budget does not say 429', (t) => {
  const get = operations.get('iam.groups.get');
  t.truthy(get);
  t.is(get?.responses['429'], undefined);
});
