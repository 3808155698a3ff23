import type { Principal } from '../auth/principal.js';
import { parseListRequest } from '../core/list-request.js';
import { invalidField, notFound } from '../core/rpc-error.js';
import type { RoleBinding } from '../resources/role-bindings/role-binding.js';
import type { RoleBindingService } from '../resources/role-bindings/role-binding-service.js';
import { ROLE_LIST, ROLE_TYPE } from '../resources/roles/role.js';
import type { RoleService } from '../resources/roles/role-service.js';
import type { AccessSimulator } from '../resources/access/access-simulator.js';
import { Code } from '../core/rpc-code.js';
import { isRpcError } from '../core/rpc-error.js';
import { changedFields, nearestRole } from '../wire/manifest-spec.js';
import {
  converge,
  type Observation,
  ResourceExpired,
  type KindReconciler,
  type RefResolver,
} from './kind-sync.js';
import type { ArborObject, KindName, RoleBindingSpec } from './resources.js';

/**
 * RoleBinding custom resources ↔ Arbor role bindings: an identity (`identityRef` or
 * `identityUid`) holds a role (`role` by name, or `roleUid`) at a group (`groupRef` or
 * `groupUid`), from `notBefore` and until `expireTime` if set. A binding's group and window
 * never change in Arbor; its identity and role may.
 */
export class RoleBindingReconciler implements KindReconciler<RoleBindingSpec> {
  readonly kind = 'RoleBinding' as const;
  readonly table = 'role_bindings' as const;

  constructor(
    private readonly bindings: RoleBindingService,
    private readonly roles: RoleService,
    private readonly now: () => number = Date.now,
    /** For observe mode's access delta (`access:simulate`); without it, none is shown. */
    private readonly simulator?: AccessSimulator,
  ) {}

  references(spec: RoleBindingSpec) {
    const out: Array<{ kind: KindName; name: string }> = [];
    if (spec.groupRef?.name) out.push({ kind: 'Group', name: spec.groupRef.name });
    if (spec.identityRef?.name) out.push({ kind: 'Identity', name: spec.identityRef.name });
    return out;
  }

  async sync(
    obj: ArborObject<RoleBindingSpec>,
    refs: RefResolver,
    p: Principal,
    observe?: Observation,
  ) {
    const spec = obj.spec ?? {};
    const { namespace } = obj.metadata;
    const groupUid = spec.groupRef?.name
      ? refs.uidOf('Group', namespace, spec.groupRef.name)
      : spec.groupUid || undefined;
    const identityUid = spec.identityRef?.name
      ? refs.uidOf('Identity', namespace, spec.identityRef.name)
      : spec.identityUid || undefined;
    if (groupUid === undefined) throw invalidField('spec.groupRef', 'a group is required');
    if (identityUid === undefined)
      throw invalidField('spec.identityRef', 'an identity is required');
    const roleUid = spec.roleUid || (await this.roleByName(p, spec.role ?? '', groupUid));
    const want = { identityUid, roleUid };
    const expireAt = spec.expireTime ? Date.parse(spec.expireTime) : undefined;
    if (expireAt !== undefined && expireAt <= this.now())
      throw await this.expired(obj.status?.uid, spec.expireTime!, p);
    const haveOf = (b: RoleBinding) => ({ identityUid: b.identity.uid, roleUid: b.role.uid });
    const result = await converge<RoleBinding>({
      uid: obj.status?.uid,
      adoptUid: spec.adoptUid,
      ...(observe
        ? {
            observe,
            createFields: {
              groupUid,
              ...want,
              expireTime: spec.expireTime,
              notBefore: spec.notBefore,
            },
          }
        : {}),
      haveOf,
      get: (uid) => this.bindings.get(p, uid),
      create: () =>
        this.bindings.create(p, groupUid, {
          ...want,
          ...(spec.expireTime ? { expireTime: spec.expireTime } : {}),
          ...(spec.notBefore ? { notBefore: spec.notBefore } : {}),
          ...(spec.condition ? { condition: spec.condition } : {}),
        }),
      uidOf: (b) => b.uid,
      check: (b) => {
        if (b.condition?.expression !== spec.condition?.expression) {
          throw invalidField(
            'spec.condition',
            `role binding ${b.uid} has ${b.condition ? 'another condition' : 'no condition'}, ` +
              'and a condition is set once; delete this RoleBinding and create a new one',
          );
        }
        const startAt = spec.notBefore ? Date.parse(spec.notBefore) : undefined;
        if (b.notBefore?.getTime() !== startAt) {
          throw invalidField(
            'spec.notBefore',
            `role binding ${b.uid} starts at ${b.notBefore?.toISOString() ?? 'creation'}, ` +
              'and a start is set once; delete this RoleBinding and create a new one',
          );
        }
        if (b.expireTime?.getTime() !== expireAt) {
          throw invalidField(
            'spec.expireTime',
            `role binding ${b.uid} expires at ${b.expireTime?.toISOString() ?? 'no time'}, ` +
              'and an expiry is set once; delete this RoleBinding and create a new one',
          );
        }
        if (b.parentUid === groupUid) return;
        throw invalidField(
          spec.groupRef ? 'spec.groupRef' : 'spec.groupUid',
          `role binding ${b.uid} is at group ${b.parentUid}, and bindings cannot move; ` +
            'delete this RoleBinding and create a new one to bind at another group',
        );
      },
      diff: (b) => changedFields(haveOf(b), want),
      update: (uid, patch) => this.bindings.update(p, uid, patch, Object.keys(patch)),
    });
    if (observe?.action) {
      const create = {
        createRoleBinding: {
          groupUid,
          ...want,
          expireTime: spec.expireTime,
          notBefore: spec.notBefore,
        },
      };
      observe.access = await this.accessDelta(p, observe.action, result.uid, create);
    }
    return result;
  }

  /**
   * The access delta of a change set in a few words ("2 change(s): ci gains repo.push at
   * acme/platform, …"), or undefined when the simulator cannot say.
   */
  private async accessDelta(
    p: Principal,
    action: NonNullable<Observation['action']>,
    uid: string,
    create: object,
  ): Promise<string | undefined> {
    if (!this.simulator) return undefined;
    // An update is the old binding gone and the new one made.
    const changes = action === 'update' ? [{ deleteRoleBinding: { uid } }, create] : [create];
    try {
      const a = await this.simulator.simulate(p, { changes, pageSize: 3 });
      const some = a.deltas.map(
        (d) =>
          `${d.identity.name || d.identity.uid} ${d.effect === 'GAIN' ? 'gains' : 'loses'} ` +
          `${d.capabilities.length === 1 ? d.capabilities[0] : `${d.capabilities.length} capabilities`} ` +
          `at ${d.group.path || d.group.uid}`,
      );
      const more = Number(a.totalCount) - some.length;
      return `${a.totalCount} change(s)${some.length ? `: ${some.join(', ')}` : ''}${more > 0 ? `, ${more} more` : ''}`;
    } catch {
      return undefined; // advice only: the field diff stands without it
    }
  }

  /**
   * Past `spec.expireTime` the object is done: its binding (if still there, listed as
   * expired) grants nothing, and one the sweeper removed is never created again, which a
   * resync would otherwise do (the custom resource being the source of truth).
   */
  private async expired(uid: string | undefined, expireTime: string, p: Principal) {
    const later = 'set a later spec.expireTime to bind again, or delete this RoleBinding';
    if (uid === undefined)
      return new ResourceExpired(
        `spec.expireTime ${expireTime} has passed; nothing is bound; ${later}`,
      );
    try {
      await this.bindings.get(p, uid);
    } catch (e) {
      if (!isRpcError(e) || e.code !== Code.NOT_FOUND) throw e;
      return new ResourceExpired(
        `role binding ${uid} expired at ${expireTime} and was removed; it is not created ` +
          `again; ${later}`,
      );
    }
    return new ResourceExpired(
      `role binding ${uid} expired at ${expireTime} and grants nothing; it is removed after ` +
        `the retention period; ${later}`,
    );
  }

  async remove(uid: string, p: Principal): Promise<void> {
    await this.bindings.delete(p, uid);
  }

  /**
   * The role called `name` that a binding at `groupUid` may use: one defined at the
   * group or the nearest ancestor, else a built-in. Custom roles may shadow built-ins.
   * @throws RpcError INVALID_ARGUMENT (no name), NOT_FOUND (no such role in reach).
   */
  private async roleByName(p: Principal, name: string, groupUid: string): Promise<string> {
    if (name === '') throw invalidField('spec.role', 'one of role or roleUid is required');
    const candidates: Array<{ uid: string; parentUid: string | null }> = [];
    let pageToken: string | undefined;
    do {
      const req = parseListRequest(
        { name, page_size: '200', ...(pageToken ? { page_token: pageToken } : {}) },
        ROLE_LIST,
      );
      const page = await this.roles.list(p, req);
      candidates.push(...page.items);
      pageToken = page.nextPageToken;
    } while (pageToken);
    const role = nearestRole(candidates, groupUid);
    if (!role) throw notFound(ROLE_TYPE, name);
    return role.uid;
  }
}
