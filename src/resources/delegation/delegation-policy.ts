import { z } from 'zod';
import type { Authorizer } from '../../auth/authorizer.js';
import type { Principal } from '../../auth/principal.js';
import { CAPABILITIES, isCapability, type Capability } from '../../auth/capabilities.js';
import { MAX_TOKEN_SCOPE } from '../../auth/api-token-authenticator.js';
import { permissionDenied } from '../../core/rpc-error.js';
import { isValidUidp } from '../../core/uidp.js';
import { IDENTITY_TYPE } from '../identities/identity.js';

/**
 * An identity's delegation policy (docs/oauth.md, Delegation): which identities may act
 * for it at the token endpoint (RFC 8693 `actor_token`), with which capabilities at most,
 * and for how long at most. A ceiling, never a grant: a delegated token holds at most the
 * identity's own grants, narrowed further by this.
 */
export interface DelegationPolicy {
  identityUid: string;
  /** The identities (uids) that may act for it, sorted. */
  actors: string[];
  /** The capabilities a delegated token may hold at most, sorted. */
  capabilities: Capability[];
  /** How long a delegation lasts at most from its start (and never past one hour per token). */
  maxLifetimeSeconds: number;
  /** Who set it last (an identity uid, `admin`, `system:<name>`). */
  setBy: string;
  updateTime: Date;
}

export const DELEGATION_POLICY_TYPE = 'iam.arbor.dev/DelegationPolicy';

/** At most this many actors a policy names. */
const MAX_POLICY_ACTORS = 32;
/** A delegation lasts at most a day (each token still at most an hour). */
export const MAX_DELEGATION_LIFETIME_S = 86_400;
/** A delegation lasts an hour unless its policy says otherwise. */
export const DEFAULT_DELEGATION_LIFETIME_S = 3600;
const MIN_DELEGATION_LIFETIME_S = 60;

const uidField = z
  .string({ error: 'must be a uid' })
  .max(512, { error: 'must be a uid' })
  .refine(isValidUidp, { error: 'must be a uid path' });

/** Whose policy is asked for. */
export const delegationQuerySchema = z.strictObject({ identityUid: uidField });

/** Set an identity's policy; `actors: []` removes it. */
export const delegationSetSchema = z
  .strictObject({
    identityUid: uidField,
    actors: z
      .array(uidField, { error: 'actors must be a list of identity uids' })
      .max(MAX_POLICY_ACTORS, { error: `at most ${MAX_POLICY_ACTORS} actors` }),
    capabilities: z
      .array(
        z
          .string({ error: 'must be a capability name' })
          .max(64, { error: 'must be a capability name' })
          .refine(isCapability, { error: 'must be a capability of the catalogue' }),
        { error: 'capabilities must be a list of capability names' },
      )
      .max(Math.min(MAX_TOKEN_SCOPE, CAPABILITIES.length), {
        error: 'too many capabilities',
      })
      .optional(),
    maxLifetimeSeconds: z
      .int({ error: 'maxLifetimeSeconds must be a whole number' })
      .min(MIN_DELEGATION_LIFETIME_S, {
        error: `maxLifetimeSeconds must be at least ${MIN_DELEGATION_LIFETIME_S}`,
      })
      .max(MAX_DELEGATION_LIFETIME_S, {
        error: `maxLifetimeSeconds must be at most ${MAX_DELEGATION_LIFETIME_S} (24 hours)`,
      })
      .optional(),
  })
  .refine((d) => d.actors.length === 0 || (d.capabilities?.length ?? 0) > 0, {
    path: ['capabilities'],
    error: 'at least one capability is required',
  })
  .refine((d) => !d.actors.includes(d.identityUid), {
    path: ['actors'],
    error: 'an identity does not act for itself',
  });

/**
 * Whoever may update the identity may read and set its policy; others learn nothing.
 * @throws RpcError NOT_FOUND (identity invisible), PERMISSION_DENIED.
 */
export function requirePolicyOwner(
  a: Authorizer,
  p: Principal,
  identityUid: string,
): Promise<void> {
  return a.require(p, 'identity.update', identityUid, 'identity.list', IDENTITY_TYPE);
}

/**
 * Whether `p` may set (or remove) the identity's policy: an actor never widens its own
 * delegation, so a delegated token may set none; then the owner's rule. The real set and
 * the simulator's both decide by this.
 * @throws RpcError PERMISSION_DENIED, NOT_FOUND.
 */
export async function requirePolicySettable(
  a: Authorizer,
  p: Principal,
  identityUid: string,
): Promise<void> {
  if (p.kind === 'identity' && p.restriction?.actors !== undefined)
    throw permissionDenied('a delegated token cannot change delegation policies');
  await requirePolicyOwner(a, p, identityUid);
}
