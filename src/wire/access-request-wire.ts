import { z } from 'zod';
import {
  ACCESS_REQUEST_LIST,
  ACCESS_REQUEST_TYPE,
  ACCESS_REQUEST_UPDATE,
  type AccessRequest,
} from '../resources/access-requests/access-request.js';
import type { RequestPolicy } from '../resources/access-requests/access-request-store.js';
import { pathField } from './access-wire.js';
import { kind } from './kinds.js';
import { timestampSchema, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

export const accessRequestV2Schema = z
  .object({
    uid: uidSchema,
    groupUid: uidSchema.meta({ description: 'The group the role is asked at.' }),
    groupPath: pathField('The group'),
    requesterUid: uidSchema.meta({ description: 'The identity that asked (the caller, always).' }),
    requesterPath: pathField('The requester'),
    roleUid: uidSchema,
    rolePath: pathField('The role (a built-in: its name)'),
    reason: z.string(),
    durationSeconds: z.int().meta({ description: 'How long the binding lasts once it starts.' }),
    notBefore: timestampSchema.optional().meta({
      description: 'The binding starts here if approved before; absent: at approval.',
    }),
    state: z.enum(['PENDING', 'APPROVED', 'DENIED', 'CANCELLED', 'EXPIRED']),
    approvalsRequired: z.int().meta({
      description: "Distinct approvers it takes: the group's policy when the request was made.",
    }),
    approvals: z.array(
      z.object({ approver: z.string(), time: timestampSchema, reason: z.string() }),
    ),
    closedBy: z.string().optional().meta({ description: 'Who denied or cancelled it.' }),
    closeReason: z.string().optional(),
    bindingUid: uidSchema.optional().meta({
      description: 'The role binding the final approval made (it expires on its own).',
    }),
    timeoutTime: timestampSchema.meta({
      description: 'Still pending at this instant, the request is closed as EXPIRED.',
    }),
    createTime: timestampSchema,
    updateTime: timestampSchema,
  })
  .meta({ description: 'A request for a role at a group, for a while, and its decision.' });
export type AccessRequestV2 = z.infer<typeof accessRequestV2Schema>;

export function accessRequestV2(r: AccessRequest): AccessRequestV2 {
  return {
    uid: r.uid,
    groupUid: r.parentUid,
    ...(r.groupPath === undefined ? {} : { groupPath: r.groupPath }),
    requesterUid: r.requesterUid,
    ...(r.requesterPath === undefined ? {} : { requesterPath: r.requesterPath }),
    roleUid: r.roleUid,
    ...(r.rolePath === undefined ? {} : { rolePath: r.rolePath }),
    reason: r.reason,
    durationSeconds: r.durationSeconds,
    ...(r.notBefore ? { notBefore: ts(r.notBefore) } : {}),
    state: r.state,
    approvalsRequired: r.approvalsRequired,
    approvals: r.approvals.map((a) => ({
      approver: a.approver,
      time: ts(a.time),
      reason: a.reason,
    })),
    ...(r.closedBy === undefined ? {} : { closedBy: r.closedBy }),
    ...(r.closeReason === undefined ? {} : { closeReason: r.closeReason }),
    ...(r.bindingUid === undefined ? {} : { bindingUid: r.bindingUid }),
    timeoutTime: ts(r.timeoutTime),
    createTime: ts(r.createTime),
    updateTime: ts(r.updateTime),
  };
}

/** Access requests' descriptor (wire/kinds.ts), in their feature's `kinds`. */
export const ACCESS_REQUEST_KIND = kind({
  type: ACCESS_REQUEST_TYPE,
  name: 'AccessRequest',
  plural: 'accessRequests',
  path: '/iam/v2beta1/accessRequests',
  spec: ACCESS_REQUEST_LIST,
  wireSchema: accessRequestV2Schema,
  toWire: accessRequestV2,
  outputOnly: ACCESS_REQUEST_UPDATE.outputOnly,
});

export const requestPolicySchema = z
  .object({
    approvals: z.int().meta({ description: 'Distinct approvers a request needs (1–10).' }),
    timeoutSeconds: z.int().meta({ description: 'How long a request waits for them.' }),
    groupUid: uidSchema.optional().meta({
      description: 'The group whose policy this is (this one or an ancestor); absent: defaults.',
    }),
  })
  .meta({ description: "A group's access-request policy, inherited below it." });

export function requestPolicyV2(p: RequestPolicy): z.infer<typeof requestPolicySchema> {
  return {
    approvals: p.approvals,
    timeoutSeconds: p.timeoutSeconds,
    ...(p.groupUid ? { groupUid: p.groupUid } : {}),
  };
}
