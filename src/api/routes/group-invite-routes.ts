import { z } from 'zod';
import {
  groupInviteCreateSchema,
  groupInviteUpdateSchema,
  redeemSchema,
} from '../../resources/group-invites/group-invite-input.js';
import type { GroupInviteService } from '../../resources/group-invites/group-invite-service.js';
import { principalOf } from '../middleware/authn.js';
import { readJsonObject } from '../middleware/json-body.js';
import { mountOperation, type RouteTarget } from '../openapi/contract.js';
import { CREATE_ERRORS } from '../openapi/error-responses.js';
import { EXAMPLE_INVITE_CODE, examplesFor } from '../openapi/examples.js';
import {
  GROUP_INVITE_KIND,
  groupInviteV1,
  groupInviteV1Schema,
} from '../../wire/group-invite-wire.js';
import { roleBindingV2, roleBindingV2Schema } from '../../wire/role-binding-wire.js';
import { mountV1, mountV2, v2Kind } from './crud.js';

/**
 * v1 spells the role `role` and repeats the path's `group` in the body; map to the v2
 * input. Only names change here: the service validates.
 */
function fromV1(body: Record<string, unknown>): Record<string, unknown> {
  const { group: _group, role, ...rest } = body;
  return role === undefined ? rest : { ...rest, roleUid: role };
}

/** The v1 create body as fromV1 reads it. */
const { roleUid, ...invite } = groupInviteCreateSchema.shape;
const v1CreateSchema = z.strictObject({ role: roleUid, ...invite });

/**
 * `/iam/v2beta1/groupInvites` (Update: role and expiry), `POST /iam/v2beta1/groupInvites:redeem`, and
 * v1's `/iam/v1/group_invites`.
 */
export function mountGroupInviteRoutes(
  t: RouteTarget,
  invites: GroupInviteService,
  bodyLimit: number,
): void {
  mountOperation(
    t,
    {
      method: 'post',
      path: '/iam/v2beta1/groupInvites:redeem',
      operationId: 'iam.groupInvites.redeem',
      summary: 'Redeem an invite',
      description:
        "Binds the caller (an identity's API token; not the admin token) with the invite's " +
        'role at its group. A single-use invite works once.',
      tags: ['Group invites'],
      access: 'bearer',
      requestBody: {
        mediaType: 'application/json',
        schema: { name: 'RedeemGroupInviteRequest', schema: redeemSchema, io: 'input' },
        required: true,
        examples: { example: { summary: 'Redeem a code', value: { code: EXAMPLE_INVITE_CODE } } },
      },
      response: {
        status: 200,
        description: 'The role binding the invite made.',
        schema: { name: 'RoleBinding', schema: roleBindingV2Schema, io: 'output' },
      },
      errors: CREATE_ERRORS,
    },
    async (ctx) => {
      const body = await readJsonObject(ctx, bodyLimit);
      ctx.body = roleBindingV2(await invites.redeem(principalOf(ctx), body));
    },
  );
  const common = { name: GROUP_INVITE_KIND.name, spec: GROUP_INVITE_KIND.spec, bodyLimit };
  mountV2(t, invites, {
    ...common,
    ...v2Kind(GROUP_INVITE_KIND),
    createSchema: groupInviteCreateSchema,
    updateSchema: groupInviteUpdateSchema,
    examples: examplesFor(GROUP_INVITE_KIND.path),
  });
  const v1 = '/iam/v1/group_invites';
  mountV1(
    t,
    {
      create: (p, group, body) => invites.create(p, group, fromV1(body)),
      get: invites.get.bind(invites),
      list: invites.list.bind(invites),
      delete: invites.delete.bind(invites),
    },
    {
      ...common,
      path: v1,
      wireSchema: groupInviteV1Schema,
      toWire: groupInviteV1,
      createSchema: v1CreateSchema,
      examples: examplesFor(v1),
    },
  );
}
