import type { Context } from 'koa';
import { parseListRequest, type QueryParams } from '../../core/list-request.js';
import { ACCESS_REVIEW_ITEM_LIST } from '../../resources/access-reviews/access-review.js';
import {
  reviewDecideSchema,
  reviewOpenSchema,
  scheduleQuerySchema,
  scheduleSetSchema,
} from '../../resources/access-reviews/access-review-input.js';
import type { AccessReviewService } from '../../resources/access-reviews/access-review-service.js';
import {
  ACCESS_REVIEW_KIND,
  accessReviewItemSchema,
  accessReviewItemV2,
  reviewScheduleSchema,
  reviewScheduleV2,
} from '../../wire/access-review-wire.js';
import { principalOf } from '../middleware/authn.js';
import { mountOperation, type RouteTarget } from '../openapi/contract.js';
import { API_ERRORS } from '../openapi/error-responses.js';
import { EXAMPLE_UIDS, examplesFor } from '../openapi/examples.js';
import { listParameters, listResponseSchema } from '../openapi/list-contract.js';
import { mountV2, v2Kind } from './crud.js';
import { mountKindAction, type KindAction } from './kind-action.js';
import { listAnswer } from './list-answer.js';

const PATH = ACCESS_REVIEW_KIND.path;
const TAG = 'Access reviews';
const EXAMPLE_ITEM = `${EXAMPLE_UIDS.folder}/3b2a190807f6e5d4/0a1b2c3d4e5f6a7b`;

/** Its actions: `POST <PATH>:<verb>`. */
const action = (t: RouteTarget, bodyLimit: number, o: KindAction) =>
  mountKindAction(
    t,
    bodyLimit,
    { path: PATH, operationPrefix: 'iam.accessReviews', bodyName: 'AccessReview', tag: TAG },
    o,
  );

/** `GET <PATH>:items?review=…`: one review's items, a List like any other. */
function mountItems(t: RouteTarget, s: AccessReviewService): void {
  mountOperation(
    t,
    {
      method: 'get',
      path: `${PATH}:items`,
      operationId: 'iam.accessReviews.items',
      summary: "A review's items",
      description:
        'The items of the review `review` (required), by uid, each a role binding as it was ' +
        'when the review opened: holder, role, last use, whether it was an unused-access ' +
        'finding, and the decision once made. `decision` keeps one decision (`none`: the ' +
        'undecided). Only items whose binding the caller may list (`role_bindings.list`) ' +
        'are shown; a review the caller may not see is NOT_FOUND.',
      tags: [TAG],
      access: 'bearer',
      parameters: listParameters(ACCESS_REVIEW_ITEM_LIST, {
        review: `${EXAMPLE_UIDS.folder}/3b2a190807f6e5d4`,
        page_size: 50,
      })
        .filter((x) => !x.name.startsWith('uidp.'))
        .map((x) => (x.name === 'review' ? { ...x, required: true } : x)),
      response: {
        status: 200,
        description: "A page of the review's items.",
        schema: {
          name: 'ListAccessReviewItemsResponse',
          schema: listResponseSchema('items', accessReviewItemSchema),
          io: 'output',
          parts: [{ name: 'AccessReviewItem', schema: accessReviewItemSchema, io: 'output' }],
        },
      },
      errors: API_ERRORS,
    },
    async (ctx: Context) => {
      const q = parseListRequest(ctx.query as QueryParams, ACCESS_REVIEW_ITEM_LIST);
      const page = await s.listItems(principalOf(ctx), q);
      ctx.body = listAnswer('items', page, accessReviewItemV2);
    },
  );
}

/**
 * `/iam/v2beta1/accessReviews`: Create (open a review at a group), Get and List, `:items`,
 * `:decide`, `:getSchedule`, `:setSchedule`. Rules live in the service
 * (docs/access-reviews.md).
 */
export function mountAccessReviewRoutes(
  t: RouteTarget,
  s: AccessReviewService,
  bodyLimit: number,
): void {
  mountV2(
    t,
    { create: s.open.bind(s), get: s.get.bind(s), list: s.list.bind(s) },
    {
      ...v2Kind(ACCESS_REVIEW_KIND),
      tag: TAG,
      createSchema: reviewOpenSchema,
      examples: examplesFor(PATH),
      bodyLimit,
    },
  );
  mountItems(t, s);
  action(t, bodyLimit, {
    verb: 'decide',
    summary: 'Decide a review item',
    description:
      'Keep, shorten (with `expireTime`, at most 365 days ahead and never later than the ' +
      "binding's expiry) or remove the item's binding, with a reason (1–1024 characters). " +
      'Applied to the binding at once, as its PATCH or DELETE would be, with the same ' +
      'checks: `role_bindings.update` at the binding (keep, shorten; and every capability ' +
      'of its role for shorten), `role_bindings.delete` (remove). Nobody decides an item of ' +
      'their own binding (PERMISSION_DENIED). FAILED_PRECONDITION: `REVIEW_CLOSED`, ' +
      '`REVIEW_PAST_DUE`, `ALREADY_DECIDED`, `BINDING_GONE`, `MANAGED_BY_KUBERNETES`.',
    input: reviewDecideSchema,
    example: { itemUid: EXAMPLE_ITEM, decision: 'remove', reason: 'left the team' },
    output: {
      name: 'AccessReviewItem',
      schema: accessReviewItemSchema,
      description: 'The item as decided.',
    },
    run: async (p, b) => accessReviewItemV2(await s.decide(p, b)),
  });
  const schedule = {
    name: 'AccessReviewSchedule',
    schema: reviewScheduleSchema,
    description: "The group's schedule.",
  };
  action(t, bodyLimit, {
    verb: 'getSchedule',
    summary: "A group's review schedule",
    description: 'The recurring review set at the group; NOT_FOUND when none is.',
    input: scheduleQuerySchema,
    example: { groupUid: EXAMPLE_UIDS.folder },
    output: schedule,
    run: async (p, b) => reviewScheduleV2(await s.schedule(p, b)),
  });
  action(t, bodyLimit, {
    verb: 'setSchedule',
    summary: "Set a group's review schedule",
    description:
      'Open a review of the group every `everyDays` (1–365), due `dueInDays` later ' +
      '(default 14, at most everyDays), with `defaultDecision` (default keep); the first ' +
      'opens at the next beat of the worker. `everyDays: 0` removes the schedule (the ' +
      'answer is then `{}`). Takes what opening a review takes.',
    input: scheduleSetSchema,
    example: { groupUid: EXAMPLE_UIDS.folder, everyDays: 90, dueInDays: 14 },
    output: schedule,
    run: async (p, b) => {
      const set = await s.setSchedule(p, b);
      return set ? reviewScheduleV2(set) : {};
    },
  });
}
