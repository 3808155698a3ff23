import { callForEtag, type Session } from './api-session.js';
import { CliError, EXIT } from './cli-errors.js';
import type { ManifestKind } from './plan-manifests.js';
import { listItems } from './resource-actions.js';
import type { Item } from './resource-kinds.js';

/** Where each kind lives in the API, and the key of its list answers. */
export const API_OF: Readonly<Record<ManifestKind, { path: string; plural: string }>> = {
  Group: { path: '/iam/v2beta1/groups', plural: 'groups' },
  Identity: { path: '/iam/v2beta1/identities', plural: 'identities' },
  RoleBinding: { path: '/iam/v2beta1/roleBindings', plural: 'roleBindings' },
};

/** A resource as the API answers a Get, with the ETag an If-Match will need. */
export interface Seen {
  item: Item;
  etag: string;
}

/** The group a uid hangs under (uids are paths); null for an organization or a built-in role. */
export function parentOf(uid: string): string | null {
  const slash = uid.lastIndexOf('/');
  return slash < 0 ? null : uid.slice(0, slash);
}

/**
 * A Get, for the resource and its ETag. @returns undefined when it does not exist (or is
 * not visible to the caller, which the API does not tell apart).
 */
export async function getSeen(
  s: Session,
  kind: ManifestKind,
  uid: string,
): Promise<Seen | undefined> {
  try {
    const { data, etag } = await callForEtag<Item>(s, 'GET', `${API_OF[kind].path}/{uid}`, {
      params: { path: { uid } },
    });
    return { item: data, etag };
  } catch (e) {
    if (e instanceof CliError && e.exitCode === EXIT.NOT_FOUND) return undefined;
    throw e;
  }
}

/** Every item of a List (all pages), each then read with a Get for its ETag. */
export async function listSeen(
  s: Session,
  kind: ManifestKind,
  query: Record<string, string>,
): Promise<Seen[]> {
  const { items } = await listItems(s, API_OF[kind], { ...query, page_size: '200' }, true);
  const out: Seen[] = [];
  for (const i of items) {
    const seen = await getSeen(s, kind, String(i.uid));
    if (seen) out.push(seen); // deleted between the list and the get: not there
  }
  return out;
}

/** Every role called `name` the caller can see, each with the group it is defined at. */
export async function rolesNamed(
  s: Session,
  name: string,
): Promise<Array<{ uid: string; parentUid: string | null }>> {
  const { items } = await listItems(
    s,
    { path: '/iam/v2beta1/roles', plural: 'roles' },
    { name, page_size: '200' },
    true,
  );
  return items.map((r) => ({ uid: String(r.uid), parentUid: parentOf(String(r.uid)) }));
}
