import type { ListSpec } from '../../core/list-request.js';
import type { Door } from '../../auth/principal.js';

/** What a change did to its resource. */
export type Operation = 'create' | 'update' | 'delete';

/** A resource as the API shows it (v2 JSON), with secrets removed. */
export type Presented = Record<string, unknown>;

/**
 * Why a change nobody asked for directly was made: a role binding that went with its
 * identity (`IDENTITY_DELETED`, naming the identity), one the expiry sweeper deleted
 * (`EXPIRED`), or one an access review's item changed (`ACCESS_REVIEW`, naming the item).
 */
export interface ChangeCause {
  reason: 'IDENTITY_DELETED' | 'EXPIRED' | 'ACCESS_REVIEW';
  /** The resource whose change carried this one along, when there is one. */
  resourceType?: string;
  resourceUid?: string;
}

/** A resource that went with a change; its own record names that change in `cause`. */
export interface CascadedChange {
  resourceType: string;
  resourceUid: string;
  operation: Operation;
}

/**
 * One audit record: who changed what, when and through which door. The same record is the
 * CloudEvent delivered to subscribers (its `id` is the event id), so there is one history.
 */
export interface AuditEvent {
  id: string;
  time: Date;
  /** `identity:<uid>`, `admin` or `system:<name>` (describePrincipal). */
  actor: string;
  actorKind: 'admin' | 'system' | 'identity';
  /**
   * A change made with a delegated token (docs/oauth.md, Delegation): the identities (uids)
   * that acted for `actor`, the token's subject, as its `act` claim nests them: the one the
   * subject's policy names first, then who acts for that one. null for every other change.
   */
  actors: string[] | null;
  door: Door;
  requestId: string | null;
  /** Fingerprint of the token acted through (sha256, 16 hex), never the token. */
  credential: string | null;
  resourceType: string;
  resourceUid: string;
  resourceParentUid: string | null;
  operation: Operation;
  /** The CloudEvents `type`, e.g. `dev.arbor.iam.group.created.v1`. */
  eventType: string;
  /** Top-level fields whose value differs between before and after. */
  changedFields: string[];
  before: Presented | null;
  after: Presented | null;
  /** Set when the change went with another one, or was Arbor's own (the expiry sweeper). */
  cause: ChangeCause | null;
  /** What went with this change, each with its own record (an identity's role bindings). */
  cascaded: CascadedChange[];
  /** Answers only: the resource's path of names, where it has a name the reader may see. */
  resourcePath?: string;
  /** Answers only: the paths of `actor` (an identity) and of each of `actors`, where seen. */
  actorPaths?: ActorPaths;
}

/** The paths of names of a record's actor and actors, each where the reader may see it. */
export interface ActorPaths {
  actor?: string;
  /** By uid (an actor the reader may not see is not there). */
  actors: ReadonlyMap<string, string>;
}

/**
 * `GET /audit/v2beta1/events`: newest first by default; `uidp.*` select by the changed
 * resource's uid, as does `within` (the uid itself or below it); `start_time` is inclusive
 * and `end_time` exclusive.
 */
export const AUDIT_LIST: ListSpec = {
  kind: 'audit_events',
  orderBy: ['time'],
  defaultOrder: { field: 'time', direction: 'desc' },
  filters: {
    resource_type: 'string',
    resource_uid: 'uid',
    /** The resource itself or anything below it: one timeline for a group and its subtree. */
    within: 'uid',
    actor: 'string',
    operation: 'string',
    door: 'string',
    start_time: 'timestamp',
    end_time: 'timestamp',
  },
};

const PAST: Record<Operation, string> = { create: 'created', update: 'updated', delete: 'deleted' };

/**
 * The CloudEvents type of a change: `iam.arbor.dev/RoleBinding` + `create` →
 * `dev.arbor.iam.role_binding.created.v1`. Stable: receivers route on it.
 */
export function eventTypeOf(resourceType: string, op: Operation): string {
  const [group = 'unknown', kind = 'unknown'] = resourceType.split('/');
  const domain = group.replace(/\.arbor\.dev$/, '').replace(/[^a-z0-9]+/g, '_');
  const snake = kind.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
  return `dev.arbor.${domain}.${snake}.${PAST[op]}.v1`;
}
