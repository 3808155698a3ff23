import { alreadyExists, failedPrecondition, notFound } from '../../core/rpc-error.js';
import { GROUP_TYPE } from '../../resources/groups/group.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import { REPO_TYPE, type Repo } from '../../resources/repos/repo.js';
import type { RepoPatch } from '../../resources/repos/repo-input.js';
import type { NewRepo, RepoStore } from '../../resources/repos/repo-store.js';
import type { Tx } from '../../resources/tx.js';
import { isForeignKeyViolation, isUniqueViolation } from '../errors.js';
import { Statement } from '../prepared.js';
import { standardList, type StandardListSpec } from '../standard-list.js';
import { kx } from '../unit-of-work.js';

interface RepoRow {
  uid: string;
  parent_uid: string;
  name: string;
  description: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = ['uid', 'parent_uid', 'name', 'description', 'created_at', 'updated_at'];

const LIST: StandardListSpec = {
  table: 'repos',
  sort: { name: 'name', created_at: 'created_at' },
  filters: { name: 'repos.name' },
  select: COLUMNS.map((c) => `repos.${c}`),
};

/**
 * The registry token server's read, on every `docker pull`: the group and its repo by name
 * in one round trip (a group with no such repo still gives its row, with a null repo).
 */
const LOCATE = new Statement(
  `SELECT g.uid AS group_uid, r.uid AS repo_uid
     FROM (SELECT uid FROM groups WHERE uid = $1) g
     LEFT JOIN repos r ON r.parent_uid = g.uid AND r.name = $2`,
);

function toRepo(r: RepoRow): Repo {
  return {
    uid: r.uid,
    parentUid: r.parent_uid,
    name: r.name,
    description: r.description,
    createTime: r.created_at,
    updateTime: r.updated_at,
  };
}

function nameTaken(name: string) {
  return alreadyExists(REPO_TYPE, `a repo named "${name}" already exists in this group`);
}

export class KnexRepoStore implements RepoStore {
  async get(tx: Tx, uid: string): Promise<Repo | undefined> {
    const row = (await kx(tx)('repos').where({ uid }).first(COLUMNS)) as RepoRow | undefined;
    return row && toRepo(row);
  }

  async insert(tx: Tx, r: NewRepo): Promise<Repo> {
    try {
      const [row] = (await kx(tx)('repos')
        .insert({ uid: r.uid, parent_uid: r.parentUid, name: r.name, description: r.description })
        .returning(COLUMNS)) as [RepoRow];
      return toRepo(row);
    } catch (e) {
      if (isForeignKeyViolation(e)) throw notFound(GROUP_TYPE, r.parentUid);
      if (isUniqueViolation(e)) throw nameTaken(r.name);
      throw e;
    }
  }

  async update(tx: Tx, uid: string, patch: RepoPatch): Promise<Repo | undefined> {
    const k = kx(tx);
    try {
      const [row] = (await k('repos')
        .where({ uid })
        .update({ ...patch, updated_at: k.fn.now() })
        .returning(COLUMNS)) as RepoRow[];
      return row && toRepo(row);
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken(patch.name ?? '');
      throw e;
    }
  }

  async delete(tx: Tx, uid: string): Promise<boolean> {
    const k = kx(tx);
    // Lock the repo: a tag pushed concurrently either lands first (and is seen below)
    // or fails its foreign key once the repo is gone.
    const locked = await k('repos').where({ uid }).forUpdate().first('uid');
    if (!locked) return false;
    const tag = await k('tags').where({ parent_uid: uid }).first('uid');
    if (tag) throw notEmpty(uid);
    try {
      return (await k('repos').where({ uid }).del()) > 0;
    } catch (e) {
      if (isForeignKeyViolation(e)) throw notEmpty(uid);
      throw e;
    }
  }

  async locate(
    tx: Tx,
    groupUid: string,
    name: string,
  ): Promise<{ group: boolean; repoUid?: string }> {
    const [row] = await LOCATE.rows<{ group_uid: string; repo_uid: string | null }>(kx(tx), [
      groupUid,
      name,
    ]);
    if (!row) return { group: false };
    return row.repo_uid === null ? { group: true } : { group: true, repoUid: row.repo_uid };
  }

  async findByName(tx: Tx, parentUid: string, name: string): Promise<Repo | undefined> {
    const row = (await kx(tx)('repos').where({ parent_uid: parentUid, name }).first(COLUMNS)) as
      RepoRow | undefined;
    return row && toRepo(row);
  }

  async ensure(tx: Tx, r: NewRepo): Promise<Repo | undefined> {
    const k = kx(tx);
    try {
      // ON CONFLICT DO NOTHING: two first pushes of one repo at once both end up here.
      await k.raw(
        `INSERT INTO repos (uid, parent_uid, name, description) VALUES (?, ?, ?, ?)
         ON CONFLICT (parent_uid, name) DO NOTHING`,
        [r.uid, r.parentUid, r.name, r.description],
      );
    } catch (e) {
      if (isForeignKeyViolation(e)) return undefined;
      throw e;
    }
    return this.findByName(tx, r.parentUid, r.name);
  }

  async list(tx: Tx, q: PageQuery): Promise<StorePage<Repo>> {
    const page = await standardList<RepoRow>(kx(tx), LIST, q);
    return { ...page, items: page.items.map(toRepo) };
  }
}

function notEmpty(uid: string) {
  return failedPrecondition('RESOURCE_NOT_EMPTY', 'cannot delete repo with child tags', uid);
}
