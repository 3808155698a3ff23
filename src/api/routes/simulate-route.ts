import type { Context } from 'koa';
import { builtinRoleUid } from '../../resources/roles/builtin-roles.js';
import type { AccessSimulator } from '../../resources/access/access-simulator.js';
import { simulateSchema } from '../../resources/access/simulate-input.js';
import { simulateAnswerV2, simulateResponseSchema } from '../../wire/simulate-wire.js';
import { principalOf } from '../middleware/authn.js';
import { readJsonObject } from '../middleware/json-body.js';
import { mountOperation, type RouteTarget } from '../openapi/contract.js';
import { API_ERRORS } from '../openapi/error-responses.js';
import { EXAMPLE_UIDS } from '../openapi/examples.js';

/** `access:simulate`: what a change set would do to access, with nothing changed. */
export function mountSimulateRoute(t: RouteTarget, s: AccessSimulator, bodyLimit: number): void {
  mountOperation(
    t,
    {
      method: 'post',
      path: '/iam/v2beta1/access:simulate',
      operationId: 'iam.access.simulate',
      summary: 'What would this change set do to access? (a dry run)',
      description:
        'Takes a change set (role bindings created or deleted, with or without `expireTime`; ' +
        "a custom role's capabilities replaced; an identity deleted, with its bindings; a " +
        'group deleted with everything below it), applies it in order to one consistent ' +
        'snapshot in memory and answers the access delta: for each identity, each ' +
        'capability it would gain or lose, the group at the top of the subtree where that ' +
        'happens, and the grants there before and after. **Nothing changes**: nothing is ' +
        'written, no audit record or event is made. The delta counts only the role ' +
        'bindings the caller may list (its own too), as who-can does; a binding the set ' +
        'creates counts where the caller may list bindings. Every change gets a verdict: ' +
        '`applied` is false for one naming something that does not exist or that the ' +
        'caller cannot see (alike), for an update of a built-in role, and for a binding ' +
        'whose identity or role may not be bound at its group; `permitted` says whether ' +
        'the caller could make it itself; a change it may not make is still simulated. ' +
        'The delta is paged ' +
        '(`pageSize`, default 50, at most 200; `pageToken` bound to the same changes) with ' +
        '`totalCount`; expired bindings grant nothing, nor does a created binding whose ' +
        '`expireTime` has passed.',
      tags: ['Access'],
      access: 'bearer',
      requestBody: {
        mediaType: 'application/json',
        schema: { name: 'SimulateAccessRequest', schema: simulateSchema, io: 'input' },
        required: true,
        examples: {
          example: {
            summary: 'Bind a role at a folder, remove another binding',
            value: {
              changes: [
                {
                  createRoleBinding: {
                    groupUid: EXAMPLE_UIDS.folder,
                    identityUid: EXAMPLE_UIDS.identity,
                    roleUid: builtinRoleUid('viewer'),
                  },
                },
                { deleteRoleBinding: { uid: EXAMPLE_UIDS.roleBinding } },
              ],
              pageSize: 50,
            },
          },
        },
      },
      response: {
        status: 200,
        description: "Each change's verdict and one page of the access delta.",
        schema: { name: 'SimulateAccessResponse', schema: simulateResponseSchema, io: 'output' },
      },
      errors: API_ERRORS,
    },
    async (ctx: Context) => {
      ctx.body = simulateAnswerV2(
        await s.simulate(principalOf(ctx), await readJsonObject(ctx, bodyLimit)),
      );
    },
  );
}
