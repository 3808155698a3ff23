import { isSelfOrBelow } from '../core/uidp.js';

/**
 * The `spec` of the arbor.dev custom resources (Group, Identity, RoleBinding; crds/) and
 * how a spec maps to the fields of the Arbor resource it describes. Two doors read these
 * manifests: the reconciler (from Kubernetes) and `arbor plan`/`apply` (from files), so
 * the mapping lives here, once, below both.
 */

/** A reference to another custom resource in the same namespace. */
export interface LocalRef {
  name: string;
}

export type DeletionPolicy = 'Delete' | 'Orphan';

interface CommonSpec {
  deletionPolicy?: DeletionPolicy;
  /** Take over an existing Arbor resource instead of creating one. */
  adoptUid?: string;
}

export interface GroupSpec extends CommonSpec {
  name?: string;
  description?: string;
  parentRef?: LocalRef;
  parentUid?: string;
}

export interface ClaimMatchSpec {
  issuer?: string;
  subject?: string;
  issuerPattern?: string;
  subjectPattern?: string;
  audience?: string;
  /** Further claims that must equal these values exactly. */
  claims?: Record<string, string>;
}

export interface IdentitySpec extends CommonSpec {
  groupRef?: LocalRef;
  groupUid?: string;
  name?: string;
  description?: string;
  claimMatch?: ClaimMatchSpec;
}

export interface RoleBindingSpec extends CommonSpec {
  groupRef?: LocalRef;
  groupUid?: string;
  identityRef?: LocalRef;
  identityUid?: string;
  role?: string;
  roleUid?: string;
  /** RFC 3339; set once, at create. */
  expireTime?: string;
  /** RFC 3339, before expireTime: a scheduled grant, from this instant; set once, at create. */
  notBefore?: string;
  /** A conditional grant (a CEL expression, docs/api.md); set once, at create. */
  condition?: { expression: string; title?: string; description?: string };
}

/** A group's own fields as a Group object asks for them (`name` defaults to the object's). */
export function groupFields(
  spec: GroupSpec,
  objectName: string,
): { name: string; description: string } {
  return { name: spec.name ?? objectName, description: spec.description ?? '' };
}

/** A claim match with empty members dropped, so `{}` and "absent" compare equal. */
export function normalizeClaimMatch(cm: object | undefined | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(cm ?? {})) {
    if (v === undefined || v === null) continue;
    if (typeof v === 'object' && Object.keys(v as object).length === 0) continue;
    out[k] = v;
  }
  return out;
}

/** An identity's own fields as an Identity object asks for them. */
export function identityFields(
  spec: IdentitySpec,
  objectName: string,
): { name: string; description: string; claimMatch: Record<string, unknown> } {
  return {
    name: spec.name ?? objectName,
    description: spec.description ?? '',
    claimMatch: normalizeClaimMatch(spec.claimMatch),
  };
}

/** The same fields of an identity as Arbor holds it, for comparison with {@link identityFields}. */
export function identityFieldsOf(i: {
  name: string;
  description: string;
  claimMatch?: object | null;
}): Record<string, unknown> {
  return {
    name: i.name,
    description: i.description,
    claimMatch: normalizeClaimMatch(i.claimMatch),
  };
}

/** The fields of `want` whose values differ from `have` (deep, by JSON), or undefined. */
export function changedFields(
  have: Readonly<Record<string, unknown>>,
  want: Readonly<Record<string, unknown>>,
): Record<string, unknown> | undefined {
  const patch: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(want)) {
    if (stableJson(have[k]) !== stableJson(v)) patch[k] = v;
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/** JSON with sorted keys and undefined/null members dropped, for comparisons only. */
export function stableJson(v: unknown): string {
  if (v === undefined || v === null) return 'null';
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (typeof v === 'object' && !(v instanceof Date)) {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined && x !== null)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${stableJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * Of the roles called by one name, the one a binding at `groupUid` uses: defined at the
 * group or its nearest ancestor, else a built-in (custom roles may shadow built-ins).
 */
export function nearestRole<R extends { uid: string; parentUid?: string | null }>(
  candidates: readonly R[],
  groupUid: string,
): R | undefined {
  return (
    candidates
      .filter((r) => !r.parentUid || isSelfOrBelow(r.parentUid, groupUid))
      // Nearest definition first: a longer uid path is deeper; built-ins (no parent) last.
      .sort((a, b) => (b.parentUid?.length ?? -1) - (a.parentUid?.length ?? -1))[0]
  );
}
