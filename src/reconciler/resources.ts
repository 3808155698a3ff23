import type { KubernetesObject, V1ObjectMeta } from '@kubernetes/client-node';

/** The custom resources' API group and the one version we serve. */
export const API_GROUP = 'arbor.dev';
export const API_VERSION = 'v1alpha1';
export const API_GROUP_VERSION = `${API_GROUP}/${API_VERSION}`;

export type KindName = 'Group' | 'Identity' | 'RoleBinding';

export interface KindInfo {
  kind: KindName;
  plural: string;
}

export const KINDS: Readonly<Record<KindName, KindInfo>> = Object.freeze({
  Group: { kind: 'Group', plural: 'groups' },
  Identity: { kind: 'Identity', plural: 'identities' },
  RoleBinding: { kind: 'RoleBinding', plural: 'rolebindings' },
});

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** A metav1.Condition. */
export interface Condition {
  type: 'Ready' | 'Synced' | 'Drifted';
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration: number;
}

export interface ArborStatus {
  /** The uid of the Arbor resource this object manages. */
  uid?: string;
  observedGeneration?: number;
  conditions?: Condition[];
  /** `observe` while the object is in observe mode (arbor.dev/mode); absent otherwise. */
  mode?: 'observe';
}

export type {
  ClaimMatchSpec,
  GroupSpec,
  IdentitySpec,
  RoleBindingSpec,
} from '../wire/manifest-spec.js';

/** A custom resource as the reconciler reads it: namespaced, named, with our status. */
export interface ArborObject<S = unknown> extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string; namespace: string };
  spec: S;
  status?: ArborStatus;
}

/** `Kind/namespace/name`: the work-queue key of one object. */
export function objectKey(kind: KindName, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

export function parseKey(key: string): { kind: KindName; namespace: string; name: string } {
  const [kind, namespace, name] = key.split('/');
  if (!kind || !(kind in KINDS) || !namespace || !name) throw new Error(`bad key ${key}`);
  return { kind: kind as KindName, namespace, name };
}

/** The cluster-scoped `NamespaceAuthority` (see `authority.ts`). */
export const AUTHORITY_PLURAL = 'namespaceauthorities';

export interface NamespaceAuthoritySpec {
  /** The Arbor identity the namespaces act as. */
  identityUid: string;
  namespaces: string[];
  /** Whose tokens the identity must accept in each namespace (default `arbor`). */
  serviceAccountName?: string;
}

export interface NamespaceAuthority extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string };
  spec: NamespaceAuthoritySpec;
}
