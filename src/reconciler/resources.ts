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
  type: 'Ready' | 'Synced';
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
}

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
}

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
