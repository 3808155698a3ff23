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

/** One capability an identity gains or loses where, as `access:simulate` answers it. */
export interface AccessChange {
  effect: 'gain' | 'lose';
  identity: string;
  capability: string;
  group: string;
}

export interface AccessDelta {
  /** Set when the delta could not be worked out (why); the field diff stands. */
  unavailable?: string;
  changes: AccessChange[];
  totalCount: number;
  /** What the delta leaves out or warns of: changes not simulated (new objects), refused ones. */
  warnings: string[];
}

export interface Plan {
  /** The API the plan was made against. */
  api: string;
  changes: PlanChange[];
  unchanged: InSync[];
  /** Things worth saying that change nothing (an expired binding not created). */
  notes: string[];
  access?: AccessDelta;
  /**
   * A digest of the manifests, the changes and every ETag the plan read: `apply` makes
   * the plan again and goes ahead only if it comes out the same.
   */
  token: string;
}
