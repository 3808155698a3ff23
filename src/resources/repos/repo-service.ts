import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import { parseMask, resolvePatch } from '../../core/field-mask.js';
import type { ListRequest } from '../../core/list-request.js';
import { notFound } from '../../core/rpc-error.js';
import { newChildUid } from '../../core/uidp.js';
import { GROUP_TYPE } from '../groups/group.js';
import { requireUid } from '../groups/group-service.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import type { UnitOfWork } from '../tx.js';
import { parseInput, withoutKeys } from '../validate.js';
import { REPO_LIST, REPO_TYPE, REPO_UPDATE, type Repo } from './repo.js';
import { repoCreateSchema, repoPatchSchema } from './repo-input.js';
import type { RepoStore } from './repo-store.js';

export interface RepoServiceDeps {
  uow: UnitOfWork;
  repos: RepoStore;
  authz: Authorizer;
  pager: ListPager;
  audit: ChangeRecorder;
}

/** Registry repos: named repositories under a group, shared by REST v2 and v1. */
export class RepoService {
  constructor(private readonly d: RepoServiceDeps) {}

  /**
   * Create a repo in the group `groupUid`.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND (group), PERMISSION_DENIED,
   *   ALREADY_EXISTS (a repo of that name is already in the group).
   */
  async create(
    p: Principal,
    groupUid: string | undefined,
    body: Record<string, unknown>,
  ): Promise<Repo> {
    const input = parseInput(repoCreateSchema, withoutKeys(body, REPO_UPDATE.outputOnly));
    const parent = requireUid(groupUid ?? '', 'parent');
    await this.d.authz.require(p, 'repo.create', parent, 'groups.list', GROUP_TYPE);
    return this.d.uow.run(async (tx) => {
      const r = await this.d.repos.insert(tx, {
        uid: newChildUid(parent),
        parentUid: parent,
        name: input.name,
        description: input.description ?? '',
      });
      await this.d.audit.record(tx, p, {
        type: REPO_TYPE,
        operation: 'create',
        uid: r.uid,
        after: r,
      });
      return r;
    });
  }

  /** @throws RpcError INVALID_ARGUMENT (malformed uid), NOT_FOUND when missing or invisible. */
  async get(p: Principal, uid: string): Promise<Repo> {
    requireUid(uid);
    await this.d.authz.require(p, 'repo.list', uid, 'repo.list', REPO_TYPE);
    const r = await this.d.uow.replicaRead((tx) => this.d.repos.get(tx, uid));
    if (!r) throw notFound(REPO_TYPE, uid);
    return r;
  }

  /** Repos the caller may list (`repo.list`). @throws RpcError INVALID_ARGUMENT (page token). */
  async list(p: Principal, req: ListRequest): Promise<ListPage<Repo>> {
    const visibility = await this.d.authz.visibility(p, 'repo.list');
    return this.d.pager.page(REPO_LIST, req, visibility, (q) =>
      this.d.uow.replicaRead((tx) => this.d.repos.list(tx, q)),
    );
  }

  /**
   * Field-mask update of `name` and `description`.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED, ALREADY_EXISTS (rename).
   */
  async update(
    p: Principal,
    uid: string,
    body: Record<string, unknown>,
    updateMask: string | string[] | undefined,
  ): Promise<Repo> {
    requireUid(uid);
    const patch = parseInput(
      repoPatchSchema,
      resolvePatch(body, parseMask(updateMask), REPO_UPDATE),
    );
    await this.d.authz.require(p, 'repo.update', uid, 'repo.list', REPO_TYPE);
    return this.d.uow.run(async (tx) => {
      const before = await this.d.repos.get(tx, uid);
      const r = await this.d.repos.update(tx, uid, patch);
      if (!r) throw notFound(REPO_TYPE, uid);
      await this.d.audit.record(tx, p, {
        type: REPO_TYPE,
        operation: 'update',
        uid,
        before,
        after: r,
      });
      return r;
    });
  }

  /**
   * @throws RpcError NOT_FOUND, PERMISSION_DENIED, FAILED_PRECONDITION (RESOURCE_NOT_EMPTY)
   *   while the repo still has tags.
   */
  async delete(p: Principal, uid: string): Promise<void> {
    requireUid(uid);
    await this.d.authz.require(p, 'repo.delete', uid, 'repo.list', REPO_TYPE);
    await this.d.uow.run(async (tx) => {
      const before = await this.d.repos.get(tx, uid);
      if (!(await this.d.repos.delete(tx, uid))) throw notFound(REPO_TYPE, uid);
      await this.d.audit.record(tx, p, { type: REPO_TYPE, operation: 'delete', uid, before });
    });
  }

  /**
   * The repo `name` in the group, created when a first push brings it (spec §5.5).
   * @returns undefined when the group does not exist.
   * @throws RpcError PERMISSION_DENIED / NOT_FOUND without `repo.create` at the group.
   */
  async ensureByName(p: Principal, groupUid: string, name: string): Promise<Repo | undefined> {
    const parent = requireUid(groupUid, 'parent');
    const found = await this.d.uow.read((tx) => this.d.repos.findByName(tx, parent, name));
    if (found) return found;
    await this.d.authz.require(p, 'repo.create', parent, 'groups.list', GROUP_TYPE);
    return this.d.uow.run((tx) =>
      this.d.repos.ensure(tx, {
        uid: newChildUid(parent),
        parentUid: parent,
        name,
        description: '',
      }),
    );
  }

  /** The repo `name` directly in the group, without an access check (the token server's view). */
  async findByName(groupUid: string, name: string): Promise<Repo | undefined> {
    return this.d.uow.read((tx) => this.d.repos.findByName(tx, groupUid, name));
  }
}
