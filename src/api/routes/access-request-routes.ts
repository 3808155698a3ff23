import {
  accessRequestCreateSchema,
  decisionSchema,
  policyQuerySchema,
  policySchema,
} from '../../resources/access-requests/access-request-input.js';
import type { AccessRequestService } from '../../resources/access-requests/access-request-service.js';
import {
  ACCESS_REQUEST_KIND,
  accessRequestV2,
  accessRequestV2Schema,
  requestPolicySchema,
  requestPolicyV2,
} from '../../wire/access-request-wire.js';
import type { RouteTarget } from '../openapi/contract.js';
import { EXAMPLE_UIDS, examplesFor } from '../openapi/examples.js';
import { mountV2, v2Kind } from './crud.js';
import { mountKindAction, type KindAction } from './kind-action.js';

const PATH = ACCESS_REQUEST_KIND.path;
const TAG = 'Access requests';
const EXAMPLE_REQUEST = `${EXAMPLE_UIDS.folder}/3b2a190807f6e5d4`;

/** Its actions: `POST <PATH>:<verb>`. */
const action = (t: RouteTarget, bodyLimit: number, o: KindAction) =>
  mountKindAction(
    t,
    bodyLimit,
    { path: PATH, operationPrefix: 'iam.accessRequests', bodyName: 'AccessRequest', tag: TAG },
    o,
  );

const REQUEST_OUT = {
  name: 'AccessRequest',
  schema: accessRequestV2Schema,
  description: 'The request as it stands now.',
};
const POLICY_OUT = {
  name: 'AccessRequestPolicy',
  schema: requestPolicySchema,
  description: 'The policy in force at the group.',
};

/**
 * `/iam/v2beta1/accessRequests`: Create (an identity asks, at a group), Get and List (its
 * own, and those an approver may decide), and `:approve`, `:deny`, `:cancel`,
 * `:getPolicy`, `:setPolicy`. Rules live in the service (docs/access-requests.md).
 */
export function mountAccessRequestRoutes(
  t: RouteTarget,
  s: AccessRequestService,
  bodyLimit: number,
): void {
  mountV2(
    t,
    { create: s.create.bind(s), get: s.get.bind(s), list: s.list.bind(s) },
    {
      ...v2Kind(ACCESS_REQUEST_KIND),
      tag: TAG,
      createSchema: accessRequestCreateSchema,
      examples: examplesFor(PATH),
      bodyLimit,
    },
  );
  const decision = (verb: string, summary: string, description: string, run: typeof s.approve) =>
    action(t, bodyLimit, {
      verb,
      summary,
      description,
      input: decisionSchema,
      example: { uid: EXAMPLE_REQUEST, reason: 'on call this week' },
      output: REQUEST_OUT,
      run: async (p, b) => accessRequestV2(await run.call(s, p, b)),
    });
  decision(
    'approve',
    'Approve a request',
    'One approval by an identity (not the requester) that could create the binding itself ' +
      'now: `role_bindings.create` at the group and every capability of the role. The ' +
      "approval that reaches the group's `approvals` makes the binding, expiring " +
      '`durationSeconds` after it starts, and answers the request APPROVED with its ' +
      '`bindingUid`. The requester approving is PERMISSION_DENIED (403); a second approval ' +
      'by the same approver is FAILED_PRECONDITION (400) with a PreconditionFailure of type ' +
      '`ALREADY_APPROVED`, as are one on a closed request (`REQUEST_CLOSED`) and one after ' +
      'its timeout (`REQUEST_TIMED_OUT`).',
    s.approve,
  );
  decision(
    'deny',
    'Deny a request',
    'Closes a pending request as DENIED; any approver (role_bindings.create at its group).',
    s.deny,
  );
  decision(
    'cancel',
    'Cancel a request',
    'Closes a pending request as CANCELLED; its requester only.',
    s.cancel,
  );
  action(t, bodyLimit, {
    verb: 'getPolicy',
    summary: "A group's request policy",
    description:
      "The policy in force: the group's own, or its nearest ancestor's, or the defaults (1 approval, 7 days).",
    input: policyQuerySchema,
    example: { groupUid: EXAMPLE_UIDS.folder },
    output: POLICY_OUT,
    run: async (p, b) => requestPolicyV2(await s.policy(p, b)),
  });
  action(t, bodyLimit, {
    verb: 'setPolicy',
    summary: "Set a group's request policy",
    description:
      'How many distinct approvers requests at this group and below need (1–10), and how ' +
      'long they wait (default 7 days); needs `groups.update` and `role_bindings.create` at the ' +
      'group. Requests made before keep theirs.',
    input: policySchema,
    example: { groupUid: EXAMPLE_UIDS.folder, approvals: 2 },
    output: POLICY_OUT,
    run: async (p, b) => requestPolicyV2(await s.setPolicy(p, b)),
  });
}
