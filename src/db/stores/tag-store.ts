import { notFound } from '../../core/rpc-error.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import { REPO_TYPE } from '../../resources/repos/repo.js';
import type { Tag } from '../../resources/tags/tag.js';
import type { TagPush, TagRemoval, TagStore, TagUpsert } from '../../resources/tags/tag-store.js';
import type { Tx } from '../../resources/tx.js';
import { isForeignKeyViolation } from '../errors.js';
import { standardList, type StandardListSpec } from '../standard-list.js';
import { kx } from '../unit-of-work.js';

interface TagRow {
  uid: string;
  parent_uid: string;
  name: string;
  digest: string;
  deprecated: boolean;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = ['uid', 'parent_uid', 'name', 'digest', 'deprecated', 'created_at', 'updated_at'];

const LIST: StandardListSpec = {
  table: 'tags',
  sort: { name: 'name', created_at: 'created_at', updated_at: 'updated_at' },
  filters: { name: 'tags.name', digest: 'tags.digest' },
  select: COLUMNS.map((c) => `tags.${c}`),
};

function toTag(r: TagRow): Tag {
  return {
    uid: r.uid,
    parentUid: r.parent_uid,
    name: r.name,
    digest: r.digest,
    deprecated: r.deprecated,
    createTime: r.created_at,
    updateTime: r.updated_at,
  };
}

export class KnexTagStore implements TagStore {
  async get(tx: Tx, uid: string): Promise<Tag | undefined> {
    const row = (await kx(tx)('tags').where({ uid }).first(COLUMNS)) as TagRow | undefined;
    return row && toTag(row);
  }

  async upsert(tx: Tx, t: TagUpsert): Promise<{ tag: Tag; created: boolean } | undefined> {
    const k = kx(tx);
    try {
      // One statement, so two pushes of the same tag at once cannot both insert.
      // `xmax = 0` holds exactly for a freshly inserted row version. Without `mayMove`
      // an existing tag is left alone and nothing comes back.
      const onConflict = t.mayMove
        ? `DO UPDATE
           SET digest = EXCLUDED.digest,
               deprecated = COALESCE(?::boolean, tags.deprecated),
               updated_at = now()`
        : 'DO NOTHING';
      const res = (await k.raw(
        `INSERT INTO tags (uid, parent_uid, name, digest, deprecated)
         VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (parent_uid, name) ${onConflict}
         RETURNING ${COLUMNS.join(', ')}, (xmax = 0) AS created`,
        [
          t.uid,
          t.parentUid,
          t.name,
          t.digest,
          t.deprecated ?? false,
          ...(t.mayMove ? [t.deprecated ?? null] : []),
        ],
      )) as { rows: Array<TagRow & { created: boolean }> };
      const row = res.rows[0];
      return row && { tag: toTag(row), created: row.created };
    } catch (e) {
      if (isForeignKeyViolation(e)) throw notFound(REPO_TYPE, t.parentUid);
      throw e;
    }
  }

  async delete(tx: Tx, uid: string): Promise<boolean> {
    return (await kx(tx)('tags').where({ uid }).del()) > 0;
  }

  async recordPush(tx: Tx, t: TagPush): Promise<Tag | undefined> {
    try {
      // pushed_at orders registry events: a redelivery (same time) or an event overtaken
      // by a later push changes nothing. The update time moves only when the digest does.
      const res = (await kx(tx).raw(
        `INSERT INTO tags (uid, parent_uid, name, digest, created_at, updated_at, pushed_at)
         VALUES (?, ?, ?, ?, ?::timestamptz, ?::timestamptz, ?::timestamptz)
         ON CONFLICT (parent_uid, name) DO UPDATE
           SET digest = EXCLUDED.digest,
               updated_at = CASE WHEN tags.digest = EXCLUDED.digest
                                 THEN tags.updated_at ELSE EXCLUDED.updated_at END,
               pushed_at = EXCLUDED.pushed_at
           WHERE tags.pushed_at IS NULL OR tags.pushed_at < EXCLUDED.pushed_at
         RETURNING ${COLUMNS.join(', ')}`,
        [t.uid, t.parentUid, t.name, t.digest, t.at, t.at, t.at],
      )) as { rows: TagRow[] };
      const row = res.rows[0];
      return row && toTag(row);
    } catch (e) {
      if (isForeignKeyViolation(e)) throw notFound(REPO_TYPE, t.parentUid);
      throw e;
    }
  }

  async recordRemoval(tx: Tx, r: TagRemoval): Promise<number> {
    const q = kx(tx)('tags')
      .where({ parent_uid: r.parentUid })
      .andWhere((w) => {
        void w.whereNull('pushed_at').orWhere('pushed_at', '<=', r.at);
      });
    if (r.name !== undefined) void q.andWhere({ name: r.name });
    if (r.digest !== undefined) void q.andWhere({ digest: r.digest });
    return q.del();
  }

  async list(tx: Tx, q: PageQuery): Promise<StorePage<Tag>> {
    const page = await standardList<TagRow>(kx(tx), LIST, q);
    return { ...page, items: page.items.map(toTag) };
  }
}
