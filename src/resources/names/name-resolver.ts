import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import { invalidField, notFound } from '../../core/rpc-error.js';
import { ancestryOf, isValidUidp } from '../../core/uidp.js';
import type { Visibility } from '../../core/visibility.js';
import { GROUP_TYPE, type Group } from '../groups/group.js';
import { IDENTITY_TYPE, type Identity } from '../identities/identity.js';
import { ROLE_TYPE, type Role } from '../roles/role.js';
import type { UnitOfWork } from '../tx.js';
import { ambiguousName, type Candidate } from './ambiguous-name.js';
import { parseNamePath } from './name-path.js';
import type { NameStore } from './name-store.js';

/** The Gets a resolved uid is answered by: the same resource, under the same rules. */
export interface NameResolverDeps {
  uow: UnitOfWork;
  names: NameStore;
  authz: Authorizer;
  groups: { get(p: Principal, uid: string): Promise<Group> };
  identities: { get(p: Principal, uid: string): Promise<Identity> };
  roles: { get(p: Principal, uid: string): Promise<Role> };
}

/** How many candidates an ambiguity lists. */
const CANDIDATES = 10;

/**
 * Names to resources, for the REST and gRPC doors alike: a path of group names, an
 * identity by its group path and name, a role by name. Each lookup filters by what the
 * caller may list inside one statement, so a name the caller cannot see is answered
 * exactly as a name that does not exist (NOT_FOUND naming what was asked), and an
 * ambiguity lists only candidates the caller can see.
 */
export class NameResolver {
  constructor(private readonly d: NameResolverDeps) {}

  /**
   * The group at the end of `path` (`acme/platform/sre`). The path starts where the
   * caller's view of the tree starts: at an organization, or at a group the caller was
   * granted `groups.list` on whose parent it cannot see. A hidden ancestor is never named.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION (AMBIGUOUS_NAME).
   */
  async group(p: Principal, path: string | undefined): Promise<Group> {
    const segments = parseNamePath('path', path);
    return this.d.groups.get(p, await this.oneGroup(p, segments));
  }

  /**
   * The identity named by the last segment of `path`, under the group the rest names
   * (`acme/platform/ci`); a single name is a person registered at the root.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION (AMBIGUOUS_NAME).
   */
  async identity(p: Principal, path: string | undefined): Promise<Identity> {
    const segments = parseNamePath('path', path);
    const name = segments[segments.length - 1] as string;
    const parents = segments.length === 1 ? null : await this.groupUids(p, segments.slice(0, -1));
    let uids: string[] = [];
    if (parents === null || parents.length > 0) {
      // An identity may always read itself (its Get says so), so it may name itself too.
      const visibility = withSelf(await this.d.authz.visibility(p, 'identity.list'), p);
      uids = await this.d.uow.replicaRead((tx) =>
        this.d.names.identitiesNamed(tx, parents, name, visibility, CANDIDATES + 1),
      );
    }
    const uid = one(IDENTITY_TYPE, segments.join('/'), 'identities', uids, (u) => ({
      uid: u,
      description: `identity ${segments.join('/')}`,
    }));
    return this.d.identities.get(p, uid);
  }

  /**
   * The role `name` may mean: a path (`acme/platform/deployer`) is the role defined at that
   * group; a plain name is a built-in or a custom role the caller may list, defined at
   * `group` or one of its ancestors when `group` (a uid or a path) is given (the roles a
   * binding there may name), anywhere otherwise.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION (AMBIGUOUS_NAME).
   */
  async role(p: Principal, name: string | undefined, group: string | undefined): Promise<Role> {
    const segments = parseNamePath('name', name);
    const roleName = segments[segments.length - 1] as string;
    let where: { parents?: readonly string[]; builtIns: boolean };
    if (segments.length > 1) {
      if (group) throw invalidField('group', 'a role path names its group already');
      where = { parents: await this.groupUids(p, segments.slice(0, -1)), builtIns: false };
    } else if (group) {
      where = { parents: ancestryOf(await this.groupUid(p, group)), builtIns: true };
    } else {
      where = { builtIns: true };
    }
    let rows: { uid: string; parentUid: string | null }[] = [];
    if (where.builtIns || (where.parents?.length ?? 0) > 0) {
      const visibility = await this.d.authz.visibility(p, 'roles.list');
      rows = await this.d.uow.replicaRead((tx) =>
        this.d.names.rolesNamed(tx, where, roleName, visibility, CANDIDATES + 1),
      );
    }
    const byUid = new Map(rows.map((r) => [r.uid, r.parentUid]));
    const uid = one(ROLE_TYPE, segments.join('/'), 'roles', [...byUid.keys()], (u) => {
      const parent = byUid.get(u);
      return {
        uid: u,
        description: parent ? `role ${roleName} defined at ${parent}` : `built-in role ${roleName}`,
      };
    });
    return this.d.roles.get(p, uid);
  }

  /** A group given as a uid (as its Get takes it) or as a path of names. */
  private async groupUid(p: Principal, group: string): Promise<string> {
    if (isValidUidp(group)) return (await this.d.groups.get(p, group)).uid;
    return this.oneGroup(p, parseNamePath('group', group));
  }

  private async oneGroup(p: Principal, segments: readonly string[]): Promise<string> {
    const path = segments.join('/');
    return one(GROUP_TYPE, path, 'groups', await this.groupUids(p, segments), (uid) => ({
      uid,
      description: `group ${path}`,
    }));
  }

  private async groupUids(p: Principal, segments: readonly string[]): Promise<string[]> {
    const visibility = await this.d.authz.visibility(p, 'groups.list');
    return this.d.uow.replicaRead((tx) =>
      this.d.names.groupsAt(tx, segments, visibility, CANDIDATES + 1),
    );
  }
}

/** The one uid of `uids`. @throws RpcError NOT_FOUND (none), FAILED_PRECONDITION (several). */
function one(
  type: string,
  name: string,
  plural: string,
  uids: readonly string[],
  describe: (uid: string) => Candidate,
): string {
  const [first, ...rest] = uids;
  if (first === undefined) throw notFound(type, name);
  if (rest.length === 0) return first;
  const shown = uids.slice(0, CANDIDATES);
  throw ambiguousName(name, plural, shown.map(describe), uids.length > CANDIDATES);
}

function withSelf(v: Visibility, p: Principal): Visibility {
  if (v.kind === 'all' || p.kind !== 'identity') return v;
  return { kind: 'scopes', scopes: [...v.scopes, p.uid] };
}
