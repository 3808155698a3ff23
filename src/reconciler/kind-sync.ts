import type { Principal } from '../auth/principal.js';
import type { ManagedTable } from '../resources/managed/managed-guard.js';
import { Code } from '../core/rpc-code.js';
import { isRpcError } from '../core/rpc-error.js';
import type { ArborObject, KindName } from './resources.js';

/**
 * A reference to another custom resource that cannot be resolved yet (it does not exist,
 * or has no Arbor uid yet). Not a failure: the object waits, with backoff, and is woken
 * early when the referenced object gets its uid.
 */
/**
 * The object's Arbor resource has run out and must not be made again: a RoleBinding whose
 * `spec.expireTime` has passed (its binding grants nothing, and the expiry sweeper deletes
 * it). Reported as Ready=False, reason `Expired`, with a Warning Event; not retried until
 * the spec changes.
 */
export class ResourceExpired extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResourceExpired';
  }
}

export class WaitingForReference extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WaitingForReference';
  }
}

/** Resolves a by-name reference to the Arbor uid that object manages. */
export interface RefResolver {
  /** @throws WaitingForReference when the object is missing or has no uid yet. */
  uidOf(kind: KindName, namespace: string, name: string): string;
  /** The uid if known, without throwing. */
  peek(kind: KindName, namespace: string, name: string): string | undefined;
}

export type SyncAction = 'created' | 'adopted' | 'updated' | 'recreated' | 'unchanged';

export interface SyncResult {
  uid: string;
  action: SyncAction;
}

/** What one kind contributes to the generic reconcile loop in `resource-reconciler.ts`. */
export interface KindReconciler<S> {
  readonly kind: KindName;
  /** Where Arbor records that one of these objects manages a row (`managed_by`). */
  readonly table: ManagedTable;
  /** The custom resources (same namespace) that `spec` names; they wake this object. */
  references(spec: S): Array<{ kind: KindName; name: string }>;
  /**
   * Make the Arbor resource match the object. Calls the same services as REST, as `p`:
   * the principal of the object's namespace (see `authority.ts`).
   * @throws WaitingForReference, RpcError (INVALID_ARGUMENT means the spec is wrong).
   */
  sync(
    obj: ArborObject<S>,
    refs: RefResolver,
    p: Principal,
    observe?: Observation,
  ): Promise<SyncResult>;
  /** Delete the Arbor resource as `p`. @throws RpcError; NOT_FOUND counts as done. */
  remove(uid: string, p: Principal): Promise<void>;
}

/**
 * Observe mode (`arbor.dev/mode: observe`): what a reconcile would write, recorded instead of
 * written. Converge fills it in; the reconciler reports it as the `Drifted` condition.
 */
export class Observation {
  /** The write converge would have made; undefined when the resource is in sync. */
  action: 'create' | 'update' | 'recreate' | undefined;
  /** For an update: the fields that differ, with the values Arbor has now. */
  fields: Array<{ field: string; from: unknown; to: unknown }> = [];
  /** The fields a create would set. */
  create: Record<string, unknown> | undefined;
  /** The access delta of the write, in short, when the kind can work it out. */
  access: string | undefined;
}

export interface ConvergeOps<A> {
  /** Observe mode: record what would be written instead of writing it. */
  observe?: Observation;
  /** The fields a create sends, for observe mode to show. */
  createFields?: Record<string, unknown>;
  /** The resource's fields as `diff` compares them (default: the resource itself). */
  haveOf?(actual: A): Record<string, unknown>;
  /** `status.uid`: the resource this object already manages. */
  uid: string | undefined;
  /** `spec.adoptUid`: take over this resource when we manage none yet. */
  adoptUid: string | undefined;
  get(uid: string): Promise<A>;
  create(): Promise<A>;
  uidOf(actual: A): string;
  /** Throw INVALID_ARGUMENT when the resource differs in a way no update can fix. */
  check?(actual: A): void;
  /** The fields to update, or undefined when the resource already matches. */
  diff(actual: A): Record<string, unknown> | undefined;
  update(uid: string, patch: Record<string, unknown>): Promise<unknown>;
}

/**
 * The level-based core every kind shares: create when we manage nothing, adopt when
 * asked, recreate when the resource vanished behind our back (the custom resource is
 * the source of truth), and otherwise update only the fields that differ, so that a
 * reconcile of an object in sync writes nothing at all.
 */
export async function converge<A>(ops: ConvergeOps<A>): Promise<SyncResult> {
  let actual: A;
  let action: SyncAction = 'unchanged';
  const o = ops.observe;
  const create = async (as: 'create' | 'recreate'): Promise<SyncResult> => {
    if (o) {
      [o.action, o.create] = [as, ops.createFields];
      return { uid: as === 'recreate' ? ops.uid! : '', action: 'unchanged' };
    }
    return {
      uid: ops.uidOf(await ops.create()),
      action: as === 'create' ? 'created' : 'recreated',
    };
  };
  if (ops.uid) {
    try {
      actual = await ops.get(ops.uid);
    } catch (e) {
      if (!isRpcError(e) || e.code !== Code.NOT_FOUND) throw e;
      return create('recreate');
    }
  } else if (ops.adoptUid) {
    actual = await ops.get(ops.adoptUid);
    action = 'adopted';
  } else {
    return create('create');
  }
  ops.check?.(actual);
  const uid = ops.uidOf(actual);
  const patch = ops.diff(actual);
  if (patch !== undefined && o) {
    o.action = 'update';
    const have = ops.haveOf?.(actual) ?? (actual as Record<string, unknown>);
    o.fields = Object.entries(patch).map(([field, to]) => ({ field, from: have[field], to }));
    return { uid, action: 'unchanged' };
  }
  if (patch !== undefined) {
    await ops.update(uid, patch);
    if (action === 'unchanged') action = 'updated';
  }
  return { uid, action };
}
