import {
  ApiException,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  AUTHORITY_PLURAL,
  KINDS,
  type NamespaceAuthority,
  type ArborObject,
  type ArborStatus,
  type KindName,
} from './resources.js';

/** The HTTP status of a failed Kubernetes API call, or undefined for anything else. */
export function kubeStatus(e: unknown): number | undefined {
  return e instanceof ApiException ? e.code : undefined;
}

export const isKubeNotFound = (e: unknown): boolean => kubeStatus(e) === 404;

/** A JSON Patch `test` that failed, or an optimistic-concurrency clash: just look again. */
export const isKubeConflict = (e: unknown): boolean => {
  const s = kubeStatus(e);
  return s === 409 || s === 422;
};

export type JsonPatchOp =
  { op: 'test' | 'add' | 'replace'; path: string; value: unknown } | { op: 'remove'; path: string };

/**
 * The few calls the reconciler makes on its own custom resources, with the content types
 * client-node would otherwise get wrong for CRs (it defaults to JSON Patch for every
 * patch; strategic merge is rejected for custom resources).
 */
export class ArborKubeApi {
  private readonly api: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.api = kc.makeApiClient(CustomObjectsApi);
  }

  private base(kind: KindName, namespace: string) {
    return { group: API_GROUP, version: API_VERSION, plural: KINDS[kind].plural, namespace };
  }

  /** @returns the object, or undefined when it does not exist. */
  async get<S>(
    kind: KindName,
    namespace: string,
    name: string,
  ): Promise<ArborObject<S> | undefined> {
    try {
      return (await this.api.getNamespacedCustomObject({
        ...this.base(kind, namespace),
        name,
      })) as ArborObject<S>;
    } catch (e) {
      if (isKubeNotFound(e)) return undefined;
      throw e;
    }
  }

  /** Every object of `kind`, in one namespace or (undefined) in all of them. */
  async list<S>(
    kind: KindName,
    namespace: string | undefined,
  ): Promise<{ items: ArborObject<S>[]; metadata?: { resourceVersion?: string } }> {
    const plural = KINDS[kind].plural;
    const res: unknown =
      namespace === undefined
        ? await this.api.listCustomObjectForAllNamespaces({
            group: API_GROUP,
            version: API_VERSION,
            plural,
          })
        : await this.api.listNamespacedCustomObject({ ...this.base(kind, namespace) });
    return res as { items: ArborObject<S>[]; metadata?: { resourceVersion?: string } };
  }

  /** Every NamespaceAuthority (cluster-scoped). */
  async listAuthorities(): Promise<{
    items: NamespaceAuthority[];
    metadata?: { resourceVersion?: string };
  }> {
    const res: unknown = await this.api.listClusterCustomObject({
      group: API_GROUP,
      version: API_VERSION,
      plural: AUTHORITY_PLURAL,
    });
    return res as { items: NamespaceAuthority[]; metadata?: { resourceVersion?: string } };
  }

  /**
   * Replace `.status` through the status subresource with a merge patch. We own the
   * whole status, so replacing its lists (conditions) wholesale is what we want.
   */
  async patchStatus(
    kind: KindName,
    namespace: string,
    name: string,
    status: ArborStatus,
  ): Promise<void> {
    await this.api.patchNamespacedCustomObjectStatus(
      // A merge patch keeps members it does not name: `mode` is removed by naming it null.
      { ...this.base(kind, namespace), name, body: { status: { mode: null, ...status } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  /**
   * Apply a JSON Patch to the object (not its status). Used for finalizers, whose list is
   * shared with other controllers: a `test` op makes the edit conditional instead of
   * overwriting someone else's entry as a merge patch would.
   */
  async jsonPatch<S>(
    kind: KindName,
    namespace: string,
    name: string,
    ops: JsonPatchOp[],
  ): Promise<ArborObject<S>> {
    return (await this.api.patchNamespacedCustomObject(
      { ...this.base(kind, namespace), name, body: ops },
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    )) as ArborObject<S>;
  }
}
