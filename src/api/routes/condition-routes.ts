import type { Context } from 'koa';
import {
  conditionTestSchema,
  MAX_CONDITION_TEST_BODY_BYTES,
  testCondition,
} from '../../resources/conditions/condition-tester.js';
import {
  conditionTestAnswerV2,
  conditionTestResponseSchema,
} from '../../wire/condition-test-wire.js';
import { principalOf } from '../middleware/authn.js';
import { readJsonObject } from '../middleware/json-body.js';
import { mountOperation, type RouteTarget } from '../openapi/contract.js';
import { API_ERRORS } from '../openapi/error-responses.js';

/** `conditions:evaluate`: try a role binding's condition on a request described in full. */
export function mountConditionRoutes(t: RouteTarget, bodyLimit: number): void {
  mountOperation(
    t,
    {
      method: 'post',
      path: '/iam/v2beta1/conditions:evaluate',
      operationId: 'iam.conditions.evaluate',
      summary: "Evaluate a role binding's condition on a described request (a tester)",
      description:
        'Checks `expression` as a role binding’s `condition.expression` is checked at create, ' +
        'then evaluates it, as the authorizer would, over `input`: `request.time` (default ' +
        'now), `request.capability`, `resource.group` (`uid` and `path` taken as given), ' +
        '`resource.type`, `resource.name` and `token.claims`; absent parts are empty. ' +
        '**Nothing is read or written**: no stored data is consulted, so the answer says ' +
        'nothing about any resource, and any authenticated caller may ask. A fault in the ' +
        'expression is an answer (`error` with its `stage` and `position`), not a refusal; ' +
        'a malformed body, an expression over 1,000 characters, more than 64 claims or a ' +
        'claim value over 2,048 characters of JSON is INVALID_ARGUMENT.',
      tags: ['Access'],
      access: 'bearer',
      requestBody: {
        mediaType: 'application/json',
        schema: { name: 'EvaluateConditionRequest', schema: conditionTestSchema, io: 'input' },
        required: true,
        examples: {
          example: {
            summary: 'Office hours in Berlin, under acme/payments',
            value: {
              expression:
                'resource.group.path.startsWith("acme/payments") && ' +
                'request.time.getHours("Europe/Berlin") < 18',
              input: {
                time: '2026-03-02T09:30:00Z',
                capability: 'repo.push',
                group: { path: 'acme/payments/api' },
                claims: { repository: 'acme/app' },
              },
            },
          },
        },
      },
      response: {
        status: 200,
        description: 'Whether it holds, the values it read, and any error with its position.',
        schema: {
          name: 'EvaluateConditionResponse',
          schema: conditionTestResponseSchema,
          io: 'output',
        },
      },
      errors: API_ERRORS,
    },
    async (ctx: Context) => {
      const body = await readJsonObject(ctx, Math.min(bodyLimit, MAX_CONDITION_TEST_BODY_BYTES));
      ctx.body = conditionTestAnswerV2(testCondition(principalOf(ctx), body));
    },
  );
}
