import type { Authorizer } from '../../auth/authorizer.js';
import type { DelegationAllowance, DelegationPolicies } from '../../auth/delegation.js';
import type { Principal } from '../../auth/principal.js';
import { notFound } from '../../core/rpc-error.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import type { UnitOfWork } from '../tx.js';
import { parseInput } from '../validate.js';
import {
  DEFAULT_DELEGATION_LIFETIME_S,
  DELEGATION_POLICY_TYPE,
  MAX_DELEGATION_LIFETIME_S,
  requirePolicyOwner,
  requirePolicySettable,
  delegationQuerySchema,
  delegationSetSchema,
  type DelegationPolicy,
} from './delegation-policy.js';
import type { DelegationPolicyStore } from './delegation-policy-store.js';

export interface DelegationPolicyServiceDeps {
  uow: UnitOfWork;
  authz: Authorizer;
  audit: ChangeRecorder;
  policies: DelegationPolicyStore;
  now?: () => number;
}

type Body = Record<string, unknown>;

/**
 * Identities' delegation policies (docs/oauth.md, Delegation): read and set by whoever may
 * update the identity, and read, live, by the token endpoint and the authenticator
 * (`allowanceOf`) for every delegated token.
 */
export class DelegationPolicyService implements DelegationPolicies {
  private readonly now: () => number;

  constructor(private readonly d: DelegationPolicyServiceDeps) {
    this.now = d.now ?? Date.now;
  }

  /**
   * The identity's policy.
   * @throws RpcError NOT_FOUND (identity invisible, or no policy), PERMISSION_DENIED (no
   *   identity.update).
   */
  async get(p: Principal, body: Body): Promise<DelegationPolicy> {
    const { identityUid } = parseInput(delegationQuerySchema, body);
    await requirePolicyOwner(this.d.authz, p, identityUid);
    const policy = await this.d.uow.read((tx) => this.d.policies.get(tx, identityUid));
    if (!policy) throw notFound(DELEGATION_POLICY_TYPE, identityUid);
    return policy;
  }

  /**
   * Set (or, with `actors: []`, remove) the identity's policy. Tokens already issued under
   * it hold what the new policy allows from the next request on (nothing, once removed).
   * A delegated token may not set any policy: an actor never widens its own delegation.
   * @returns the policy, or undefined when removed.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED.
   */
  async set(p: Principal, body: Body): Promise<DelegationPolicy | undefined> {
    const input = parseInput(delegationSetSchema, body);
    await requirePolicySettable(this.d.authz, p, input.identityUid);
    return this.d.uow.run(async (tx) => {
      const before = await this.d.policies.get(tx, input.identityUid);
      if (input.actors.length === 0) {
        if (!(await this.d.policies.delete(tx, input.identityUid)))
          throw notFound(DELEGATION_POLICY_TYPE, input.identityUid);
        await this.d.audit.record(tx, p, {
          type: DELEGATION_POLICY_TYPE,
          operation: 'delete',
          uid: input.identityUid,
          before,
        });
        return undefined;
      }
      const after: DelegationPolicy = {
        identityUid: input.identityUid,
        actors: [...new Set(input.actors)].sort(),
        capabilities: [...new Set(input.capabilities ?? [])].sort(),
        maxLifetimeSeconds: Math.min(
          input.maxLifetimeSeconds ?? DEFAULT_DELEGATION_LIFETIME_S,
          MAX_DELEGATION_LIFETIME_S,
        ),
        setBy: actorOf(p),
        updateTime: new Date(this.now()),
      };
      // The identity's foreign key answers NOT_FOUND for one deleted meanwhile.
      await this.d.policies.set(tx, after);
      await this.d.audit.record(tx, p, {
        type: DELEGATION_POLICY_TYPE,
        operation: before ? 'update' : 'create',
        uid: input.identityUid,
        ...(before ? { before } : {}),
        after,
      });
      return after;
    });
  }

  /** What the identity's policy allows now, for the token endpoint and the authenticator. */
  async allowanceOf(identityUid: string): Promise<DelegationAllowance | undefined> {
    const p = await this.d.uow.read((tx) => this.d.policies.get(tx, identityUid));
    return (
      p && {
        actors: p.actors,
        capabilities: new Set(p.capabilities),
        maxLifetimeSeconds: p.maxLifetimeSeconds,
      }
    );
  }
}

function actorOf(p: Principal): string {
  return p.kind === 'identity' ? p.uid : p.kind === 'admin' ? 'admin' : `system:${p.name}`;
}
