import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import type { ListRequest } from '../../core/list-request.js';
import { notFound, permissionDenied } from '../../core/rpc-error.js';
import { newChildUid } from '../../core/uidp.js';
import { requireUid } from '../groups/group-service.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import { REPO_TYPE } from '../repos/repo.js';
import type { UnitOfWork } from '../tx.js';
import { parseInput, withoutKeys } from '../validate.js';
import { TAG_LIST, TAG_OUTPUT_ONLY, TAG_TYPE, type Tag } from './tag.js';
import { tagPutSchema } from './tag-input.js';
import type { TagPush, TagRemoval, TagStore } from './tag-store.js';

export interface TagServiceDeps {
  uow: UnitOfWork;
  tags: TagStore;
  authz: Authorizer;
  pager: ListPager;
  audit: ChangeRecorder;
}

/**
 * Tags of registry repos. Access is decided at the repo's uid: the authorizer's scopes
 * are prefixes, so a grant on the repo's group covers the repo and its tags.
 */
export class TagService {
  constructor(private readonly d: TagServiceDeps) {}

  /**
   * Create the tag `name` in the repo, or, when the repo already has a tag of that name,
   * point it at the new digest (same uid, new updateTime). Creating needs `tag.create`;
   * moving a tag that exists is an update and needs `tag.update` too, or whoever may only
   * push new tags could repoint `latest` at anything.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND (repo missing or invisible), PERMISSION_DENIED.
   */
  async create(
    p: Principal,
    repoUid: string | undefined,
    body: Record<string, unknown>,
  ): Promise<Tag> {
    const input = parseInput(tagPutSchema, withoutKeys(body, TAG_OUTPUT_ONLY));
    const repo = requireUid(repoUid ?? '', 'parent');
    await this.d.authz.require(p, 'tag.create', repo, 'repo.list', REPO_TYPE);
    const mayMove = await this.d.authz.can(p, 'tag.update', repo);
    return this.d.uow.run(async (tx) => {
      const written = await this.d.tags.upsert(tx, {
        uid: newChildUid(repo),
        parentUid: repo,
        name: input.name,
        digest: input.digest,
        deprecated: input.deprecated,
        mayMove,
      });
      if (!written) throw permissionDenied('missing capability tag.update to move an existing tag');
      const { tag, created } = written;
      // A re-push moves the tag; the upsert does not return the old digest, so an update
      // record carries only the after state.
      const operation = created ? 'create' : 'update';
      await this.d.audit.record(tx, p, { type: TAG_TYPE, operation, uid: tag.uid, after: tag });
      return tag;
    });
  }

  /** @throws RpcError INVALID_ARGUMENT (malformed uid), NOT_FOUND when missing or invisible. */
  async get(p: Principal, uid: string): Promise<Tag> {
    requireUid(uid);
    await this.d.authz.require(p, 'tag.list', uid, 'tag.list', TAG_TYPE);
    const t = await this.d.uow.replicaRead((tx) => this.d.tags.get(tx, uid));
    if (!t) throw notFound(TAG_TYPE, uid);
    return t;
  }

  /**
   * Tags the caller may list (`tag.list`); `uidp.children_of=<repo uid>` is one repo's tags.
   * @throws RpcError INVALID_ARGUMENT (page token).
   */
  async list(p: Principal, req: ListRequest): Promise<ListPage<Tag>> {
    const visibility = await this.d.authz.visibility(p, 'tag.list');
    return this.d.pager.page(TAG_LIST, req, visibility, (q) =>
      this.d.uow.replicaRead((tx) => this.d.tags.list(tx, q)),
    );
  }

  /** @throws RpcError INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED. */
  async delete(p: Principal, uid: string): Promise<void> {
    requireUid(uid);
    await this.d.authz.require(p, 'tag.delete', uid, 'tag.list', TAG_TYPE);
    await this.d.uow.run(async (tx) => {
      const before = await this.d.tags.get(tx, uid);
      if (!(await this.d.tags.delete(tx, uid))) throw notFound(TAG_TYPE, uid);
      await this.d.audit.record(tx, p, { type: TAG_TYPE, operation: 'delete', uid, before });
    });
  }

  /**
   * A push the registry reported: idempotent under redelivery (see TagStore.recordPush).
   * @returns the tag when it changed. @throws RpcError NOT_FOUND, PERMISSION_DENIED.
   */
  async recordPush(p: Principal, push: Omit<TagPush, 'uid'>): Promise<Tag | undefined> {
    await this.d.authz.require(p, 'tag.create', push.parentUid, 'repo.list', REPO_TYPE);
    return this.d.uow.run(async (tx) => {
      const tag = await this.d.tags.recordPush(tx, { ...push, uid: newChildUid(push.parentUid) });
      if (tag)
        await this.d.audit.record(tx, p, {
          type: TAG_TYPE,
          operation: 'update',
          uid: tag.uid,
          after: tag,
        });
      return tag;
    });
  }

  /** A delete the registry reported. @throws RpcError NOT_FOUND, PERMISSION_DENIED. */
  async recordRemoval(p: Principal, removal: TagRemoval): Promise<number> {
    await this.d.authz.require(p, 'tag.delete', removal.parentUid, 'repo.list', REPO_TYPE);
    return this.d.uow.run((tx) => this.d.tags.recordRemoval(tx, removal));
  }
}
