import { z } from 'zod';
import type { AuditEvent } from '../resources/audit/audit-event.js';
import { timestampSchema, ts } from './time.js';
import { uidSchema } from './uid-schema.js';

/** A resource as the v2 API showed it (secrets removed). */
const presented = z.record(z.string(), z.unknown());

export const auditEventV2Schema = z
  .object({
    id: z.string(),
    time: timestampSchema,
    actor: z.string().meta({ description: '`identity:<uid>`, `admin` or `system:<name>`.' }),
    actorPath: z
      .string()
      .optional()
      .meta({
        description:
          'On a change made with a delegated token: the actor (the subject the token acts ' +
          'for) as a path of names, where the caller may see that identity.',
      }),
    actors: z
      .array(
        z.object({
          uid: uidSchema,
          path: z
            .string()
            .optional()
            .meta({ description: 'Its path of names, where the caller may see it.' }),
        }),
      )
      .optional()
      .meta({
        description:
          'On a change made with a delegated token (RFC 8693 `actor_token`, docs/oauth.md): ' +
          "the identities that acted for `actor`, as the token's `act` claim nests them " +
          "(the one the actor's delegation policy names first, then who acts for that one). " +
          'Absent for every other change.',
      }),
    door: z.enum(['rest', 'grpc', 'reconciler', 'sts', 'cli', 'system']),
    requestId: z.string().optional(),
    credential: z
      .string()
      .optional()
      .meta({ description: 'Fingerprint of the token acted through, never the token.' }),
    resourceType: z.string(),
    resourceUid: uidSchema,
    resourcePath: z
      .string()
      .optional()
      .meta({
        description:
          'The resource as a path of names (`acme/platform/ci`): its name in the record under ' +
          "the path of the group it hangs under, from where the caller's view of the tree " +
          'starts. Absent for a resource with no name (a role binding, an access request) ' +
          'and where the caller may not list that group.',
      }),
    operation: z.enum(['create', 'update', 'delete']),
    eventType: z.string().meta({ examples: ['dev.arbor.iam.group.created.v1'] }),
    changedFields: z.array(z.string()),
    before: presented.optional(),
    after: presented.optional(),
    cause: z
      .object({
        reason: z.enum(['IDENTITY_DELETED', 'EXPIRED', 'ACCESS_REVIEW']),
        resourceType: z.string().optional(),
        resourceUid: uidSchema.optional(),
      })
      .optional()
      .meta({
        description:
          'Why a change nobody asked for directly was made: a role binding that went with its ' +
          'identity (`IDENTITY_DELETED`, naming the identity), was swept after its expiry ' +
          '(`EXPIRED`), or was changed by an access review item (`ACCESS_REVIEW`, naming the item).',
      }),
    cascaded: z
      .array(
        z.object({
          resourceType: z.string(),
          resourceUid: uidSchema,
          operation: z.enum(['create', 'update', 'delete']),
        }),
      )
      .optional()
      .meta({
        description:
          "What went with this change (a deleted identity's role bindings), each also " +
          'recorded on its own with this change as its `cause`; only those whose own records ' +
          'the caller may read.',
      }),
  })
  .meta({ description: 'One change: who made it, through which door, before and after.' });
export type AuditEventV2 = z.infer<typeof auditEventV2Schema>;

export function auditEventV2(e: AuditEvent): AuditEventV2 {
  return {
    id: e.id,
    time: ts(e.time),
    actor: e.actor,
    ...(e.actorPaths?.actor === undefined ? {} : { actorPath: e.actorPaths.actor }),
    ...(e.actors === null ? {} : { actors: e.actors.map((uid) => actorV2(uid, e)) }),
    door: e.door,
    ...(e.requestId !== null ? { requestId: e.requestId } : {}),
    ...(e.credential !== null ? { credential: e.credential } : {}),
    resourceType: e.resourceType,
    resourceUid: e.resourceUid,
    ...(e.resourcePath === undefined ? {} : { resourcePath: e.resourcePath }),
    operation: e.operation,
    eventType: e.eventType,
    changedFields: e.changedFields,
    ...(e.before !== null ? { before: e.before } : {}),
    ...(e.after !== null ? { after: e.after } : {}),
    ...(e.cause !== null ? { cause: e.cause } : {}),
    ...(e.cascaded.length > 0 ? { cascaded: e.cascaded } : {}),
  };
}

function actorV2(uid: string, e: AuditEvent): { uid: string; path?: string } {
  const path = e.actorPaths?.actors.get(uid);
  return path === undefined ? { uid } : { uid, path };
}
