import type { Capability } from './capabilities.js';
import type { UpstreamClaims } from './upstream-claims.js';

/**
 * Who is calling. Decided once per request by an authenticator and handed to every
 * service call; services decide access from it, routes never do.
 */
export type Principal =
  /** The bootstrap token (ARBOR_ADMIN_TOKEN): every capability everywhere. */
  (
    | { readonly kind: 'admin' }
    /** A component of Arbor itself, e.g. the reconciler: every capability everywhere. */
    | { readonly kind: 'system'; readonly name: string; readonly manager?: string }
    /**
     * An identity holding an API token: what its role bindings grant, narrowed by the
     * token's `restriction` when it was down-scoped at the token endpoint (docs/oauth.md).
     */
    | {
        readonly kind: 'identity';
        readonly uid: string;
        readonly manager?: string;
        readonly restriction?: TokenRestriction;
        /**
         * The claims of the verified upstream token its API token was exchanged from
         * (auth/upstream-claims.ts): a condition's `token.claims`. Absent: none known.
         */
        readonly claims?: UpstreamClaims;
      }
  ) & {
    /** How the call came in: recorded in the audit trail, never used to decide access. */
    readonly via?: Via;
  };

/**
 * What a down-scoped API token narrows its identity's grants to: the authorizer intersects
 * every grant with it, on every door. Absent fields narrow nothing.
 */
export interface TokenRestriction {
  /** Only these capabilities (the token's `scope`). */
  readonly scope?: ReadonlySet<Capability>;
  /** Only at these groups and below them (the token's resources, group uids). */
  readonly resources?: readonly string[];
  /**
   * A delegated token's actors (RFC 8693 `act`), the current actor first: who acts for the
   * identity. Its `scope` is then narrowed by their delegation policies as they are now.
   */
  readonly actors?: readonly string[];
}

/** Whether `p` acts through a down-scoped token. */
export function isRestricted(p: Principal): boolean {
  return p.kind === 'identity' && p.restriction !== undefined;
}

/**
 * `manager`: the custom resource a reconciler call is made for (`Group team-a/payments`).
 * Resources it writes are marked managed by it, and nobody else may change them
 * (see `resources/managed/managed-guard.ts`).
 */
export function managerOf(p: Principal): string | undefined {
  return p.kind === 'admin' ? undefined : p.manager;
}

/**
 * The front door a change came through; `system` for no door at all: Arbor acting on its
 * own schedule (the binding expiry sweeper).
 */
export type Door = 'rest' | 'grpc' | 'reconciler' | 'sts' | 'cli' | 'system';

/** The request context of a principal: which door, which request, which credential. */
export interface Via {
  readonly door: Door;
  readonly requestId?: string;
  /** A fingerprint of the credential acted through (never the credential itself). */
  readonly credential?: string;
}

/** The same principal, acting through `via` (a new frozen object: one per request). */
export function withVia(p: Principal, via: Via): Principal {
  return Object.freeze({ ...p, via: Object.freeze({ ...via }) });
}

export const ADMIN: Principal = Object.freeze({ kind: 'admin' });

export function systemPrincipal(name: string, via?: Via): Principal {
  return Object.freeze({
    kind: 'system',
    name,
    ...(via ? { via: Object.freeze({ ...via }) } : {}),
  });
}

export function describePrincipal(p: Principal): string {
  switch (p.kind) {
    case 'admin':
      return 'admin';
    case 'system':
      return `system:${p.name}`;
    case 'identity':
      return `identity:${p.uid}`;
  }
}
