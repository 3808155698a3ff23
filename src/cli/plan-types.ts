import type { ManifestKind } from './plan-manifests.js';

/** One field of a change: what Arbor has (absent on a create) and what it will have. */
export interface FieldChange {
  field: string;
  from?: unknown;
  to?: unknown;
}

/**
 * One write `arbor apply` makes, in order. A create names its parent and its references
 * either by uid (it exists) or by the manifest that creates it earlier in the same plan
 * (`parentObject`, `refs`), resolved as the apply goes.
 */
export interface PlanChange {
  action: 'create' | 'update' | 'delete';
  kind: ManifestKind;
  /** The manifest (`Kind namespace/name`); absent for a delete under --prune. */
  object?: string;
  /** What Arbor calls it: a group's or identity's name, a binding's "identity → role". */
  title: string;
  /** update, delete: the resource, and the ETag the plan saw (sent as If-Match). */
  uid?: string;
  etag?: string;
  /** create: the parent group's uid; none for an organization. */
  parentUid?: string;
  /** create: the manifest that creates the parent in this plan. */
  parentObject?: string;
  /** create: the body; update: the fields to set (the update mask is its keys). */
  body?: Record<string, unknown>;
  /** create: body fields that are the uid of a manifest created earlier in this plan. */
  refs?: Record<string, string>;
  fields: FieldChange[];
  /** Why, when it is not plain: "pruned: no manifest names it", "expireTime is set once". */
  why?: string;
}

/** An object whose resource already matches its manifest, with the ETag the plan saw. */
export interface InSync {
  object: string;
  uid: string;
  etag: string;
}

/** The capabilities an identity gains or loses at a group, as `access:simulate` answers it. */
export interface AccessChange {
  effect: 'gain' | 'lose';
  /** Its name (its uid where the caller may not read it). */
  identity: string;
  /** Its path of names; empty where the caller may not read it. */
  identityPath: string;
  capabilities: string[];
  /** The group's path of names (its uid where the caller may not read it). */
  group: string;
  /** A conditional change: its condition's title, else its expression (held only when it holds). */
  when?: string;
}

export interface AccessDelta {
  /** Set when the delta could not be worked out (why); the field diff stands. */
  unavailable?: string;
  changes: AccessChange[];
  /** Who gains, loses or changes the ability to act for whom (delegation policies), in words. */
  delegations?: string[];
  totalCount: number;
  /** What the delta leaves out or warns of: changes not simulated (new objects), refused ones. */
  warnings: string[];
}

/**
 * A role or identity a change names by uid (a binding's role, its identity), with a
 * digest of what of it decides access: a role's capabilities, an identity's claim match or
 * static keys. A binding's grant depends on them as much as on the binding itself.
 */
export interface NamedRef {
  kind: 'Role' | 'Identity';
  uid: string;
  /** For people: the name the plan saw (the uid when it could not see it). */
  name: string;
  /** A digest of its access-deciding fields, or "not found". */
  digest: string;
}

export interface Plan {
  /** The API the plan was made against. */
  api: string;
  changes: PlanChange[];
  unchanged: InSync[];
  /** Every role and identity the changes name, as the plan read them. */
  refs: NamedRef[];
  /** Things worth saying that change nothing (an expired binding not created). */
  notes: string[];
  access?: AccessDelta;
  /**
   * A digest of the manifests, the changes, every ETag the plan read, the roles and
   * identities the changes name, and the access delta: `apply` makes the plan again and
   * goes ahead only if it comes out the same.
   */
  token: string;
}

/** A plan before its access delta is worked out and its token made. */
export type PlanDraft = Omit<Plan, 'access' | 'token'>;
