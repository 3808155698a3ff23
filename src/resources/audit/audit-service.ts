import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import type { ListRequest } from '../../core/list-request.js';
import { isSelfOrBelow, parentOf } from '../../core/uidp.js';
import type { Visibility } from '../../core/visibility.js';
import { GROUP_TYPE } from '../groups/group.js';
import type { ListPager } from '../list-pager.js';
import type { PathBook, Paths } from '../names/path-book.js';
import type { ListPage } from '../list-types.js';
import type { UnitOfWork } from '../tx.js';
import { AUDIT_LIST, type ActorPaths, type AuditEvent, type Presented } from './audit-event.js';
import type { AuditStore } from './audit-store.js';

export interface AuditServiceDeps {
  uow: UnitOfWork;
  audit: AuditStore;
  authz: Authorizer;
  pager: ListPager;
  /** Paths of names for the resources records are about (absent: uids alone). */
  paths?: PathBook;
}

/** Reads of the audit trail. There is no write here: records come only from AuditLog. */
export class AuditService {
  constructor(private readonly d: AuditServiceDeps) {}

  /**
   * The records of resources in the subtrees where the caller holds `audit.list`
   * (a caller holding it nowhere gets an empty page, as every list).
   * @throws RpcError INVALID_ARGUMENT (page token, filters).
   */
  async list(p: Principal, req: ListRequest): Promise<ListPage<AuditEvent>> {
    const visibility = await this.d.authz.visibility(p, 'audit.list');
    const page = await this.d.pager.page(AUDIT_LIST, req, visibility, (q) =>
      this.d.uow.replicaRead((tx) => this.d.audit.list(tx, q)),
    );
    return {
      ...page,
      items: await this.named(
        p,
        page.items.map((e) => cascadedIn(e, visibility)),
      ),
    };
  }

  /**
   * Each record with `resourcePath`: the path of names of the resource it is about, where it
   * has a name. The name is the record's own (after the change, or before a delete: a
   * deleted resource is no longer there to be read), under the path of the group it hangs
   * under, which only a caller that may list that group is shown. A record made with a
   * delegated token also has `actorPaths`: its subject's and its actors' paths, as identity
   * paths are shown anywhere (identity.list, or being that identity). One read for the page.
   */
  private async named(p: Principal, es: AuditEvent[]): Promise<AuditEvent[]> {
    if (this.d.paths === undefined || es.length === 0) return es;
    const groups = es.filter((e) => e.resourceType === GROUP_TYPE).map((e) => e.resourceUid);
    const delegated = es.filter((e) => e.actors !== null);
    const paths = await this.d.paths.of(p, {
      groups: es.flatMap((e) => (e.resourceParentUid === null ? [] : [e.resourceParentUid])),
      named: groups,
      identities: delegated.flatMap((e) => [...(e.actors ?? []), ...subjectOf(e)]),
    });
    return es.map((e) => {
      const out = e.actors === null ? e : { ...e, actorPaths: actorPathsOf(e, e.actors, paths) };
      const name = nameIn(e.after) ?? nameIn(e.before);
      if (name === undefined) return out;
      // A group the caller sees whose parent it does not is named from itself, as its Get.
      const path =
        e.resourceType === GROUP_TYPE
          ? paths.groupNamed(e.resourceUid, name)
          : paths.under(parentOf(e.resourceUid), name);
      return path === undefined ? out : { ...out, resourcePath: path };
    });
  }
}

/** The identity uid of a record's actor (`identity:<uid>`), if it is one. */
function subjectOf(e: AuditEvent): string[] {
  return e.actorKind === 'identity' && e.actor.startsWith(IDENTITY_ACTOR)
    ? [e.actor.slice(IDENTITY_ACTOR.length)]
    : [];
}

const IDENTITY_ACTOR = 'identity:';

function actorPathsOf(e: AuditEvent, actors: string[], paths: Paths): ActorPaths {
  const [subject] = subjectOf(e);
  const actor = subject === undefined ? undefined : paths.identity(subject);
  const named = new Map<string, string>();
  for (const uid of actors) {
    const path = paths.identity(uid);
    if (path !== undefined) named.set(uid, path);
  }
  return { ...(actor === undefined ? {} : { actor }), actors: named };
}

function nameIn(side: Presented | null): string | undefined {
  const name = side?.name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/**
 * `e` with only the cascaded changes whose own records the reader may read: an identity's
 * record must not list the uids of its bindings at groups the reader cannot see.
 */
function cascadedIn(e: AuditEvent, v: Visibility): AuditEvent {
  if (v.kind === 'all' || e.cascaded.length === 0) return e;
  const cascaded = e.cascaded.filter((c) =>
    v.scopes.some((scope) => isSelfOrBelow(scope, c.resourceUid)),
  );
  return cascaded.length === e.cascaded.length ? e : { ...e, cascaded };
}
