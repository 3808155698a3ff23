import type { JsonValue } from '@bufbuild/protobuf';
import type { Authenticator } from '../auth/authenticator.js';
import { parseListRequest } from '../core/list-request.js';
import { AccessReviewsService } from '../gen/arbor/iam/v2beta1/access_reviews_pb.js';
import { ACCESS_REVIEW_ITEM_LIST } from '../resources/access-reviews/access-review.js';
import type { AccessReviewService } from '../resources/access-reviews/access-review-service.js';
import {
  ACCESS_REVIEW_KIND,
  accessReviewItemV2,
  reviewScheduleV2,
} from '../wire/access-review-wire.js';
import { principalOf } from './authn.js';
import { bodyOf, mountCrud } from './crud.js';
import type { GrpcRouter } from './json-rpc.js';
import { listQueryOf } from './list-query.js';

/**
 * AccessReviewsService: Create (open), Get and List as every kind's; ListAccessReviewItems,
 * DecideAccessReviewItem and the schedule as REST's `:items`, `:decide`, `:getSchedule` and
 * `:setSchedule`, from the request message's proto3 JSON (the same service, the same
 * validation and errors, the same wire).
 */
export function mountAccessReviewRpcs(
  router: GrpcRouter,
  auth: Authenticator,
  s: AccessReviewService,
): void {
  mountCrud(
    router,
    auth,
    AccessReviewsService,
    { create: s.open.bind(s), get: s.get.bind(s), list: s.list.bind(s) },
    ACCESS_REVIEW_KIND,
  );
  const m = AccessReviewsService.method;
  router.jsonRpc(m.listAccessReviewItems, async (req, ctx) => {
    const p = await principalOf(auth, ctx);
    const query = listQueryOf(bodyOf(m.listAccessReviewItems.input, req) as JsonValue);
    const page = await s.listItems(p, parseListRequest(query, ACCESS_REVIEW_ITEM_LIST));
    return {
      items: page.items.map((i) => accessReviewItemV2(i) as JsonValue),
      nextPageToken: page.nextPageToken ?? '',
      totalCount: page.totalCount ?? null,
      skipped: page.skipped ?? null,
    };
  });
  router.jsonRpc(m.decideAccessReviewItem, async (req, ctx) => {
    const p = await principalOf(auth, ctx);
    const body = bodyOf(m.decideAccessReviewItem.input, req);
    return accessReviewItemV2(await s.decide(p, body)) as JsonValue;
  });
  router.jsonRpc(m.getAccessReviewSchedule, async (req, ctx) => {
    const p = await principalOf(auth, ctx);
    return reviewScheduleV2(await s.schedule(p, { groupUid: req.groupUid })) as JsonValue;
  });
  router.jsonRpc(m.setAccessReviewSchedule, async (req, ctx) => {
    const p = await principalOf(auth, ctx);
    // everyDays 0 (proto3's unset) removes, as the REST body's 0 does.
    const body = { everyDays: 0, ...bodyOf(m.setAccessReviewSchedule.input, req) };
    const set = await s.setSchedule(p, body);
    return (set ? reviewScheduleV2(set) : {}) as JsonValue;
  });
}
