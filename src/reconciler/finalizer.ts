import type { ArborKubeApi, JsonPatchOp } from './kube-api.js';
import type { ArborObject, KindName } from './resources.js';

/**
 * Our finalizer. While it is on an object, Kubernetes keeps the object (with a
 * deletionTimestamp) until we have deleted the Arbor resource behind it, so a
 * `kubectl delete` cannot leave an orphan unless the user asked for one.
 */
export const FINALIZER = 'arbor.dev/finalizer';

export function hasFinalizer(obj: ArborObject): boolean {
  return obj.metadata.finalizers?.includes(FINALIZER) ?? false;
}

export function isDeleting(obj: ArborObject): boolean {
  return obj.metadata.deletionTimestamp !== undefined && obj.metadata.deletionTimestamp !== null;
}

/** Whether deleting the object should delete the Arbor resource too (the default). */
export function deletesExternal(obj: ArborObject<{ deletionPolicy?: string }>): boolean {
  return obj.spec?.deletionPolicy !== 'Orphan';
}

/**
 * Add our finalizer. Conditional on the resourceVersion we read, so a concurrent edit
 * of the list fails with 409/422 (and the key is retried) instead of being lost.
 *
 * @returns the updated object.
 * @throws ApiException 409/422 on a conflicting concurrent change, 404 when gone.
 */
export async function addFinalizer<S>(
  api: ArborKubeApi,
  kind: KindName,
  obj: ArborObject<S>,
): Promise<ArborObject<S>> {
  const { namespace, name, resourceVersion, finalizers } = obj.metadata;
  const ops: JsonPatchOp[] = [
    { op: 'test', path: '/metadata/resourceVersion', value: resourceVersion },
    finalizers === undefined || finalizers.length === 0
      ? { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] }
      : { op: 'add', path: '/metadata/finalizers/-', value: FINALIZER },
  ];
  return api.jsonPatch<S>(kind, namespace, name, ops);
}

/**
 * Remove our finalizer only. The `test` op pins the entry by index and value, so other
 * controllers' finalizers are never touched, and status writes in between don't conflict.
 *
 * @throws ApiException 422 when the list changed under us (retry), 404 when gone.
 */
export async function removeFinalizer(
  api: ArborKubeApi,
  kind: KindName,
  obj: ArborObject,
): Promise<void> {
  const i = obj.metadata.finalizers?.indexOf(FINALIZER) ?? -1;
  if (i < 0) return;
  await api.jsonPatch(kind, obj.metadata.namespace, obj.metadata.name, [
    { op: 'test', path: `/metadata/finalizers/${i}`, value: FINALIZER },
    { op: 'remove', path: `/metadata/finalizers/${i}` },
  ]);
}
