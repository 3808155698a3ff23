import type { JsonValue } from '@bufbuild/protobuf';
import type { Authenticator } from '../auth/authenticator.js';
import { AccessRequestsService } from '../gen/arbor/iam/v2beta1/access_requests_pb.js';
import type { AccessRequestService } from '../resources/access-requests/access-request-service.js';
import {
  ACCESS_REQUEST_KIND,
  accessRequestV2,
  requestPolicyV2,
} from '../wire/access-request-wire.js';
import { principalOf } from './authn.js';
import { mountCrud } from './crud.js';
import type { GrpcRouter } from './json-rpc.js';

/**
 * AccessRequestsService: Create, Get and List as every kind's, Approve, Deny and Cancel as
 * REST's `:approve`, `:deny` and `:cancel`, and the policy as `:getPolicy` / `:setPolicy`
 * (the same service, so the same authorization and errors; the same wire).
 */
export function mountAccessRequestRpcs(
  router: GrpcRouter,
  auth: Authenticator,
  s: AccessRequestService,
): void {
  mountCrud(
    router,
    auth,
    AccessRequestsService,
    { create: s.create.bind(s), get: s.get.bind(s), list: s.list.bind(s) },
    ACCESS_REQUEST_KIND,
  );
  const decisions = [
    [AccessRequestsService.method.approveAccessRequest, s.approve],
    [AccessRequestsService.method.denyAccessRequest, s.deny],
    [AccessRequestsService.method.cancelAccessRequest, s.cancel],
  ] as const;
  for (const [method, decide] of decisions) {
    router.jsonRpc(method, async (req, ctx) => {
      const body = {
        uid: req.uid,
        ...(typeof req.reason === 'string' ? { reason: req.reason } : {}),
      };
      return accessRequestV2(await decide.call(s, await principalOf(auth, ctx), body)) as JsonValue;
    });
  }
  const m = AccessRequestsService.method;
  router.jsonRpc(m.getAccessRequestPolicy, async (req, ctx) => {
    const p = await principalOf(auth, ctx);
    return requestPolicyV2(await s.policy(p, { groupUid: req.groupUid })) as JsonValue;
  });
  router.jsonRpc(m.setAccessRequestPolicy, async (req, ctx) => {
    const p = await principalOf(auth, ctx);
    // An unset approvals reads 0 in proto3: refused as the REST body without it would be.
    const body = {
      groupUid: req.groupUid,
      approvals: req.approvals,
      ...(req.timeoutSeconds === undefined ? {} : { timeoutSeconds: req.timeoutSeconds }),
    };
    return requestPolicyV2(await s.setPolicy(p, body)) as JsonValue;
  });
}
