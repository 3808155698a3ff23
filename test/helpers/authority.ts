import { readClusterIssuer } from '../../src/reconciler/cluster-trust.js';
import { createBinding, createIdentity } from './iam-fixtures.js';
import type { TestCluster } from './kube.js';
import type { Client } from './server.js';

/**
 * Namespace authority for e2e tests: the Arbor side (an identity that accepts a
 * namespace's ServiceAccount, with a role) and the cluster side (a NamespaceAuthority).
 */
const AT = { group: 'arbor.dev', version: 'v1alpha1', plural: 'namespaceauthorities' } as const;

/** The uid of the built-in role called `name`. */
export async function builtinRole(admin: Client, name: string): Promise<string> {
  const res = await admin.get(`/iam/v2beta1/roles?name=${name}`);
  // Built-in roles have flat uids; custom ones hang under their group.
  const role = (res.body as { roles: Array<{ uid: string }> }).roles.find(
    (r) => !r.uid.includes('/'),
  );
  if (!role) throw new Error(`no built-in role ${name}`);
  return role.uid;
}

/**
 * Through REST, as the administrator: an identity under `group` that accepts the tokens of
 * ServiceAccount `arbor` in `namespace`, holding `role` at `group`. Returns its uid.
 */
export async function namespaceIdentity(
  admin: Client,
  cluster: TestCluster,
  group: string,
  namespace: string,
  role = 'owner',
): Promise<string> {
  const issuer = await readClusterIssuer(cluster.kc);
  const uid = await createIdentity(admin, group, `ns-${namespace}`.slice(0, 63), {
    issuer,
    subject: `system:serviceaccount:${namespace}:arbor`,
  });
  await createBinding(admin, group, uid, await builtinRole(admin, role));
  return uid;
}

/** Create the cluster-scoped NamespaceAuthority `name`. */
export async function assignAuthority(
  cluster: TestCluster,
  name: string,
  identityUid: string,
  namespaces: string[],
): Promise<void> {
  await cluster.custom.createClusterCustomObject({
    ...AT,
    body: {
      apiVersion: 'arbor.dev/v1alpha1',
      kind: 'NamespaceAuthority',
      metadata: { name },
      spec: { identityUid, namespaces },
    },
  });
}

/** Delete the NamespaceAuthority `name`. */
export async function revokeAuthority(cluster: TestCluster, name: string): Promise<void> {
  await cluster.custom.deleteClusterCustomObject({ ...AT, name });
}
