import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import { ancestryOf, isRootUid, isSelfOrBelow, parentOf } from '../../core/uidp.js';
import type { Visibility } from '../../core/visibility.js';
import type { UnitOfWork } from '../tx.js';
import type { NameStore } from './name-store.js';

export interface PathBookDeps {
  uow: UnitOfWork;
  names: NameStore;
  authz: Authorizer;
}

/** The uids a page of answers would show paths for. */
export interface PathsWanted {
  groups?: Iterable<string>;
  identities?: Iterable<string>;
  roles?: Iterable<string>;
  /** Groups whose own name the answer has (`groupNamed`): only their parents are read. */
  named?: Iterable<string>;
}

/**
 * Paths of names for the uids of one page, as the caller may see them: undefined for what
 * it may not (the answer then leaves the path out; its uid says nothing the answer did not).
 */
export interface Paths {
  /** `acme/platform/ci`: from where the caller's view of the tree begins down to the group. */
  group(uid: string): string | undefined;
  /** The identity's group path, then its name (a person at the root: its name alone). */
  identity(uid: string): string | undefined;
  /** A built-in role's name; a custom role's group path, then its name. */
  role(uid: string): string | undefined;
  /** `name` under the group `parentUid` (none: at the root), for what is gone (audit). */
  under(parentUid: string | undefined, name: string): string | undefined;
  /** The group `uid` with `name` as its own name, for a group that is gone (audit). */
  groupNamed(uid: string, name: string): string | undefined;
}

const visible = (v: Visibility, uid: string) =>
  v.kind === 'all' || v.scopes.some((s) => isSelfOrBelow(s, uid));

/**
 * Paths of names for people reading answers. A path starts where the caller's view of the
 * tree starts (an organization, or a group it was granted whose parent it cannot see), as
 * name resolution reads paths, so a path it is shown is one it can give back; a hidden
 * ancestor is never named. A group is shown with `groups.list`, an identity with
 * `identity.list` (or being the caller), a custom role with `roles.list`, each only where
 * the groups above it can be named too. The names of a whole page come from one statement,
 * asked only for what the caller may see (at most the page's uids times their depth).
 */
export class PathBook {
  constructor(private readonly d: PathBookDeps) {}

  async of(p: Principal, want: PathsWanted): Promise<Paths> {
    const [groupsV, identitiesV, rolesV] = await Promise.all([
      this.d.authz.visibility(p, 'groups.list'),
      this.d.authz.visibility(p, 'identity.list'),
      this.d.authz.visibility(p, 'roles.list'),
    ]);
    const seesIdentity = (uid: string) =>
      (p.kind === 'identity' && p.uid === uid) || visible(identitiesV, uid);
    const seesRole = (uid: string) => isRootUid(uid) || visible(rolesV, uid);
    const groups = new Set<string>();
    const addPath = (uid: string | undefined) => {
      if (uid === undefined) return;
      for (const g of ancestryOf(uid)) if (visible(groupsV, g)) groups.add(g);
    };
    for (const g of want.groups ?? []) addPath(g);
    for (const g of want.named ?? []) addPath(parentOf(g));
    const identities = [...new Set(want.identities ?? [])].filter(seesIdentity);
    for (const i of identities) addPath(parentOf(i));
    const roles = [...new Set(want.roles ?? [])].filter(seesRole);
    for (const r of roles) addPath(parentOf(r));
    const found =
      groups.size + identities.length + roles.length === 0
        ? {
            groups: new Map<string, string>(),
            identities: new Map<string, string>(),
            roles: new Map<string, string>(),
          }
        : await this.d.uow.replicaRead((tx) =>
            this.d.names.namesOf(tx, { groups: [...groups], identities, roles }),
          );
    const group = (uid: string): string | undefined => {
      if (!visible(groupsV, uid)) return undefined;
      const down = ancestryOf(uid).reverse();
      const names = down.slice(down.findIndex((g) => visible(groupsV, g)));
      const named = names.map((g) => found.groups.get(g));
      return named.every((n) => n !== undefined) ? named.join('/') : undefined;
    };
    const under = (parentUid: string | undefined, name: string): string | undefined => {
      if (parentUid === undefined) return name;
      const at = group(parentUid);
      return at === undefined ? undefined : `${at}/${name}`;
    };
    const named = (names: Map<string, string>, uid: string) => {
      const name = names.get(uid);
      return name === undefined ? undefined : under(parentOf(uid), name);
    };
    return {
      group,
      identity: (uid) => named(found.identities, uid),
      role: (uid) => named(found.roles, uid),
      under,
      groupNamed: (uid, name) => {
        if (!visible(groupsV, uid)) return undefined;
        const parent = parentOf(uid);
        return parent !== undefined && visible(groupsV, parent) ? under(parent, name) : name;
      },
    };
  }
}
