import type { Visibility } from '../../core/visibility.js';
import type { Tx } from '../tx.js';

/**
 * The lookups behind name resolution. Every one answers at most `limit` uids and filters
 * by the caller's visibility inside its one statement, so a name the caller cannot see
 * costs the same as a name that does not exist and is answered by the same empty list.
 */
export interface NameStore {
  /**
   * The groups at the end of `path`. The first name is looked for only among the groups
   * where the caller's view of the tree begins: the organizations for `all`, the scope
   * groups otherwise (every scope's parent is hidden, or it would not be a scope). Each
   * further name is a child of the one before.
   */
  groupsAt(tx: Tx, path: readonly string[], groups: Visibility, limit: number): Promise<string[]>;
  /** Identities named `name` under any of `parents` (null: root-level people). */
  identitiesNamed(
    tx: Tx,
    parents: readonly string[] | null,
    name: string,
    visibility: Visibility,
    limit: number,
  ): Promise<string[]>;
  /**
   * Roles named `name`: the built-ins (when `builtIns`), and the custom roles the caller may
   * list defined at one of `parents` (undefined: anywhere).
   */
  rolesNamed(
    tx: Tx,
    where: { parents?: readonly string[]; builtIns: boolean },
    name: string,
    visibility: Visibility,
    limit: number,
  ): Promise<{ uid: string; parentUid: string | null }[]>;
  /**
   * The names (and, for roles, parents) of some groups, identities and roles, in one
   * statement: what a page of answers needs to show paths. No visibility here: the caller
   * (PathBook) asks only for what it may show.
   */
  namesOf(tx: Tx, uids: NamesWanted): Promise<NamesFound>;
}

export interface NamesWanted {
  groups: readonly string[];
  identities: readonly string[];
  roles: readonly string[];
}

export interface NamesFound {
  groups: Map<string, string>;
  identities: Map<string, string>;
  roles: Map<string, string>;
}
