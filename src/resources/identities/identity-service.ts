import type { Authorizer, Grant } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import { parseMask, resolvePatch } from '../../core/field-mask.js';
import type { ListRequest } from '../../core/list-request.js';
import { invalidField, notFound } from '../../core/rpc-error.js';
import { isValidUidp, newChildUid } from '../../core/uidp.js';
import { GROUP_TYPE } from '../groups/group.js';
import { requireUid } from '../groups/group-service.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import { requireHoldsGrants } from '../roles/grant-guard.js';
import { requireUnmanaged, type ManagedGuard } from '../managed/managed-guard.js';
import { revokeBindings } from '../role-bindings/revoke-bindings.js';
import { ROLE_BINDING_TYPE } from '../role-bindings/role-binding.js';
import type { RoleBindingStore } from '../role-bindings/role-binding-store.js';
import type { UnitOfWork } from '../tx.js';
import { parseInput, withoutKeys } from '../validate.js';
import {
  IDENTITY_LIST,
  IDENTITY_TYPE,
  IDENTITY_UPDATE,
  STATIC_KEYS_MAX_LIFETIME_MS,
  type Identity,
  type StaticKeys,
} from './identity.js';
import { identitySchemas, resolveExpiration, type IdentitySchemas } from './identity-input.js';
import type { ReadCache } from '../read-cache.js';
import type { IdentityChanges, IdentityStore } from './identity-store.js';

export interface IdentityServiceDeps {
  uow: UnitOfWork;
  identities: IdentityStore;
  /** Its bindings go with a deleted identity, each recorded (`revokeBindings`). */
  bindings: Pick<RoleBindingStore, 'ofIdentity' | 'deleteAll'>;
  authz: Authorizer;
  pager: ListPager;
  audit: ChangeRecorder;
  /** Whether `http://` issuers are accepted (ARBOR_ALLOW_INSECURE_ISSUERS). */
  allowInsecureIssuers: boolean;
  /** Refuses writes to rows a custom resource manages (migration 0008); absent: no check. */
  managed?: ManagedGuard;
  /**
   * The identities exchanges name, kept while the change feed vouches (migration 0034);
   * absent (no feed): every exchange reads the database.
   */
  exchangeCache?: ReadCache<Identity | undefined>;
  now?: () => Date;
}

/** Equal as JSON values, whatever the key order (jsonb reorders keys); null = absent. */
function sameValue(a: unknown, b: unknown): boolean {
  const canonical = (v: unknown): unknown => {
    if (v instanceof Date) return v.toISOString();
    if (Array.isArray(v)) return v.map(canonical);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
      );
    }
    return v ?? null;
  };
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

type StaticKeysInput = NonNullable<ReturnType<IdentitySchemas['create']['parse']>['staticKeys']>;

/** The resolution of lastSeenTime (the STS also remembers its own touches for this long). */
const LAST_SEEN_RESOLUTION_MS = 60_000;

/** What an identity's delete decides on. */
export interface IdentityDeleteFacts {
  uid: string;
  /**
   * What its bindings grant: every one not expired, scheduled ones (not yet started)
   * included, since deleting the identity deletes them too.
   */
  grants: readonly Grant[];
  /** The Kubernetes object managing it (`managed_by`), null when none. */
  managedBy: string | null;
}

/**
 * The dry run of an identity's delete: `delete` decides by it inside its transaction (on
 * the bindings it holds locked there), access:simulate on its snapshot's.
 * @throws RpcError NOT_FOUND (not visible), PERMISSION_DENIED (no identity.delete, or its
 *   bindings grant what the caller does not hold: `requireHoldsGrants`), FAILED_PRECONDITION
 *   (MANAGED_BY_KUBERNETES).
 */
export async function requireIdentityDeletable(
  authz: Authorizer,
  p: Principal,
  f: IdentityDeleteFacts,
): Promise<void> {
  await authz.require(p, 'identity.delete', f.uid, 'identity.list', IDENTITY_TYPE);
  await requireHoldsGrants(authz, p, f.grants);
  requireUnmanaged(f.managedBy, p);
}

/** Identities that workloads assume through the STS; the rules shared by every front door. */
export class IdentityService {
  /** The input schemas every create and update is parsed with (the API document shows them). */
  readonly schemas: IdentitySchemas;
  readonly #now: () => Date;

  constructor(private readonly d: IdentityServiceDeps) {
    this.schemas = identitySchemas(d.allowInsecureIssuers);
    this.#now = d.now ?? (() => new Date());
  }

  /**
   * Create an identity under the group `parentUid`.
   * @throws RpcError INVALID_ARGUMENT (one violation per field, e.g. `claimMatch.issuer`),
   *   NOT_FOUND (group missing or invisible), PERMISSION_DENIED (no identity.create).
   */
  async create(
    p: Principal,
    parentUid: string | undefined,
    body: Record<string, unknown>,
  ): Promise<Identity> {
    if (parentUid === undefined) throw invalidField('parent', 'a group uid is required');
    requireUid(parentUid, 'parent');
    const input = parseInput(this.schemas.create, withoutKeys(body, IDENTITY_UPDATE.outputOnly));
    const now = this.#now();
    const staticKeys = input.staticKeys ? this.#staticKeys(input.staticKeys, now, now) : null;
    await this.d.authz.require(p, 'identity.create', parentUid, 'groups.list', GROUP_TYPE);
    return this.d.uow.run(async (tx) => {
      const inserted = await this.d.identities.insert(tx, {
        uid: newChildUid(parentUid),
        parentUid,
        name: input.name,
        description: input.description ?? '',
        claimMatch: input.claimMatch ?? null,
        staticKeys,
        createTime: now,
      });
      const i = this.d.managed
        ? await this.d.managed.created(tx, 'identities', inserted, p)
        : inserted;
      await this.d.audit.record(tx, p, {
        type: IDENTITY_TYPE,
        operation: 'create',
        uid: i.uid,
        after: i,
      });
      return i;
    });
  }

  /**
   * An identity may always read itself: a person registered at the root (the server's login
   * client) holds no binding there, yet `whoami` must be able to name them.
   * @throws RpcError INVALID_ARGUMENT (malformed uid), NOT_FOUND (missing or invisible).
   */
  async get(p: Principal, uid: string): Promise<Identity> {
    requireUid(uid);
    if (p.kind !== 'identity' || p.uid !== uid)
      await this.d.authz.require(p, 'identity.list', uid, 'identity.list', IDENTITY_TYPE);
    const found = await this.d.uow.replicaRead((tx) => this.d.identities.get(tx, uid));
    if (!found) throw notFound(IDENTITY_TYPE, uid);
    return found;
  }

  /** The identities the caller may list. @throws RpcError INVALID_ARGUMENT (bad page token). */
  async list(p: Principal, req: ListRequest): Promise<ListPage<Identity>> {
    const visibility = await this.d.authz.visibility(p, 'identity.list');
    return this.d.pager.page(IDENTITY_LIST, req, visibility, (q) =>
      this.d.uow.replicaRead((tx) => this.d.identities.list(tx, q)),
    );
  }

  /**
   * Field-mask update of name, description, claimMatch and staticKeys. Switching between
   * claimMatch and staticKeys needs both in the mask (the other one resets to unset).
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED.
   */
  async update(
    p: Principal,
    uid: string,
    body: Record<string, unknown>,
    updateMask: string | string[] | undefined,
  ): Promise<Identity> {
    requireUid(uid);
    const patch = parseInput(
      this.schemas.patch,
      resolvePatch(body, parseMask(updateMask), IDENTITY_UPDATE),
    );
    await this.d.authz.require(p, 'identity.update', uid, 'identity.list', IDENTITY_TYPE);
    return this.d.uow.run(async (tx) => {
      await this.d.managed?.beforeWrite(tx, 'identities', uid, p);
      const cur = await this.d.identities.get(tx, uid, true);
      if (!cur) throw notFound(IDENTITY_TYPE, uid);
      const changes: IdentityChanges = { name: patch.name, description: patch.description };
      if (patch.claimMatch !== undefined) changes.claimMatch = patch.claimMatch;
      if (patch.staticKeys !== undefined) {
        changes.staticKeys =
          patch.staticKeys && this.#staticKeys(patch.staticKeys, cur.createTime, this.#now());
      }
      const cm = changes.claimMatch !== undefined ? changes.claimMatch : cur.claimMatch;
      const sk = changes.staticKeys !== undefined ? changes.staticKeys : cur.staticKeys;
      const hasClaimMatch = cm !== undefined && cm !== null;
      const hasStaticKeys = sk !== undefined && sk !== null;
      if (hasClaimMatch && hasStaticKeys) {
        throw invalidField('staticKeys', 'cannot be set together with claimMatch');
      }
      if (!hasClaimMatch && !hasStaticKeys) {
        throw invalidField('claimMatch', 'one of claimMatch or staticKeys is required');
      }
      // Who may assume it changes: only for someone holding what its bindings grant. A
      // v1 PUT repeats both fields unchanged; that changes nothing and needs nothing.
      if (!sameValue(cm, cur.claimMatch) || !sameValue(sk, cur.staticKeys)) {
        // The row lock above holds off new bindings (their foreign key needs it) until we commit.
        await requireHoldsGrants(this.d.authz, p, await this.d.identities.grantsOf(tx, uid));
      }
      const updated = await this.d.identities.update(tx, uid, changes);
      if (!updated) throw notFound(IDENTITY_TYPE, uid);
      await this.d.audit.record(tx, p, {
        type: IDENTITY_TYPE,
        operation: 'update',
        uid,
        before: cur,
        after: updated,
      });
      return updated;
    });
  }

  /**
   * Delete the identity and, with it, every role binding that names it: each binding is its
   * own `role_binding.deleted` record (cause `IDENTITY_DELETED`), and the identity's record
   * lists them in `cascaded`.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED (also when its bindings
   *   grant what the caller does not hold: see `requireHoldsGrants`).
   */
  async delete(p: Principal, uid: string): Promise<void> {
    requireUid(uid);
    await this.d.authz.require(p, 'identity.delete', uid, 'identity.list', IDENTITY_TYPE);
    // Deleting it is deleting its bindings (the foreign key refuses the identity otherwise).
    await this.d.authz.changingGrants(
      this.d.uow.run(async (tx) => {
        // The row lock holds off new bindings (their foreign key check needs it), so the
        // bindings read below are all there are until we commit.
        const before = await this.d.identities.get(tx, uid, true);
        if (!before) throw notFound(IDENTITY_TYPE, uid);
        await requireIdentityDeletable(this.d.authz, p, {
          uid,
          grants: await this.d.identities.grantsOf(tx, uid),
          managedBy: (await this.d.managed?.managerOf(tx, 'identities', uid)) ?? null,
        });
        await this.d.managed?.beforeWrite(tx, 'identities', uid, p);
        const revoked = await revokeBindings(
          tx,
          this.d,
          p,
          await this.d.bindings.ofIdentity(tx, uid),
          { reason: 'IDENTITY_DELETED', resourceType: IDENTITY_TYPE, resourceUid: uid },
        );
        if (!(await this.d.identities.delete(tx, uid))) throw notFound(IDENTITY_TYPE, uid);
        await this.d.audit.record(tx, p, {
          type: IDENTITY_TYPE,
          operation: 'delete',
          uid,
          before,
          cascaded: revoked.map((b) => ({
            resourceType: ROLE_BINDING_TYPE,
            resourceUid: b.uid,
            operation: 'delete' as const,
          })),
        });
      }),
    );
  }

  /**
   * The identity a token exchange names, with no principal (the STS has none yet).
   * @returns undefined for a malformed or unknown uid; never throws for those.
   */
  async getForExchange(uid: string): Promise<Identity | undefined> {
    if (!isValidUidp(uid)) return undefined;
    const load = () => this.d.uow.read((tx) => this.d.identities.get(tx, uid));
    return this.d.exchangeCache ? this.d.exchangeCache.read(uid, load) : load();
  }

  /**
   * Record a successful exchange (STS). lastSeenTime is kept to the minute: the statement
   * writes only when the recorded time is a minute old, so every process and replica that
   * exchanges for the identity within that minute writes nothing.
   * @throws RpcError UNAVAILABLE on database failure.
   */
  async touchLastSeen(uid: string, time: Date = this.#now()): Promise<void> {
    const due = new Date(time.getTime() - LAST_SEEN_RESOLUTION_MS);
    await this.d.uow.run((tx) => this.d.identities.touchLastSeen(tx, uid, time, due));
  }

  #staticKeys(input: StaticKeysInput, createdAt: Date, now: Date): StaticKeys {
    if (createdAt.getTime() + STATIC_KEYS_MAX_LIFETIME_MS <= now.getTime()) {
      throw invalidField(
        'staticKeys',
        'static keys can only be set within 365 days of the identity being created',
      );
    }
    return {
      issuer: input.issuer,
      subject: input.subject,
      issuerKeys: input.issuerKeys,
      expirationTime: resolveExpiration(input.expirationTime, createdAt, now),
    };
  }
}
