import type { PageQuery, StorePage } from '../list-types.js';
import type { Tx } from '../tx.js';
import type { Repo } from './repo.js';
import type { RepoPatch } from './repo-input.js';

export interface NewRepo {
  uid: string;
  parentUid: string;
  name: string;
  description: string;
}

export interface RepoStore {
  get(tx: Tx, uid: string): Promise<Repo | undefined>;
  /** @throws RpcError NOT_FOUND (the group), ALREADY_EXISTS (the name is taken in the group). */
  insert(tx: Tx, repo: NewRepo): Promise<Repo>;
  /** @throws RpcError ALREADY_EXISTS when a rename collides. @returns undefined when missing. */
  update(tx: Tx, uid: string, patch: RepoPatch): Promise<Repo | undefined>;
  /** @returns false when nothing was there. @throws RpcError FAILED_PRECONDITION while tags remain. */
  delete(tx: Tx, uid: string): Promise<boolean>;
  list(tx: Tx, q: PageQuery): Promise<StorePage<Repo>>;
  /**
   * Where a registry path points, in one read: whether the group `groupUid` exists, and the
   * uid of its repo `name` when there is one (all the registry token server asks).
   */
  locate(tx: Tx, groupUid: string, name: string): Promise<{ group: boolean; repoUid?: string }>;
  /** The repo named `name` directly under `parentUid`, if any. */
  findByName(tx: Tx, parentUid: string, name: string): Promise<Repo | undefined>;
  /**
   * The repo named `name` under `parentUid`, created (with `uid`) when missing; safe
   * against a concurrent ensure of the same name. @returns undefined when the group is missing.
   */
  ensure(tx: Tx, repo: NewRepo): Promise<Repo | undefined>;
}
