import { call, type Session } from './api-session.js';
import type { NameBook } from './name-book.js';
import type { ResourceKind } from './resource-kinds.js';

interface Binding {
  uid: string;
  identity?: { uid: string };
  role?: { uid: string; name?: string };
  group?: { uid: string };
}

interface BindingPage {
  roleBindings?: Binding[];
  nextPageToken?: string;
}

/** `viewer at acme/platform`: a binding of a known identity, by its role and group. */
async function roleAt(names: NameBook, b: Binding): Promise<string> {
  const role = b.role?.name || (b.role ? await names.rolePath(b.role.uid) : '?');
  return `${role} at ${b.group ? await names.groupPath(b.group.uid) : '?'}`;
}

/**
 * What a delete message calls `uid`, read before it is gone: a group, identity or role by
 * its path of names, a role binding by what it grants (`acme/ci as viewer at acme/platform`),
 * anything else by its uid. Names come through the Gets, so only what the caller may see.
 */
export async function deletedLabel(
  s: Session,
  names: NameBook,
  kind: ResourceKind,
  uid: string,
): Promise<string> {
  switch (kind.command) {
    case 'groups':
      return names.groupPath(uid);
    case 'identities':
      return names.identityPath(uid);
    case 'roles':
      return names.rolePath(uid);
    case 'role-bindings': {
      const b = await call<Binding>(s, 'GET', '/iam/v2beta1/roleBindings/{uid}', {
        params: { path: { uid } },
      }).catch(() => undefined);
      if (!b?.identity) return uid;
      return `${await names.identityPath(b.identity.uid)} as ${await roleAt(names, b)}`;
    }
    default:
      return uid;
  }
}

/**
 * The role bindings that deleting `uid` takes along, read before the delete: an identity's
 * delete revokes every binding that names it, and DELETE answers an empty body. Only what
 * the caller may list is counted; a kind that takes nothing along answers [] unasked.
 * @returns each binding as `viewer at acme/platform`; [] when they cannot be listed (the
 *   delete itself will say why).
 */
export async function cascadeOf(
  s: Session,
  kind: ResourceKind,
  uid: string,
  names: NameBook,
): Promise<string[]> {
  if (kind.command !== 'identities') return [];
  const uids: string[] = [];
  let token: string | undefined;
  try {
    do {
      const query = { identity: uid, page_size: '200', ...(token ? { page_token: token } : {}) };
      const page = await call<BindingPage>(s, 'GET', '/iam/v2beta1/roleBindings', {
        params: { query },
      });
      for (const b of page.roleBindings ?? []) uids.push(await roleAt(names, b));
      token = page.nextPageToken;
    } while (token);
  } catch {
    return [];
  }
  return uids;
}

/** `deleted identity acme/ci and its 2 role bindings: viewer at acme, editor at acme/app`. */
export function deletedLine(
  kind: ResourceKind,
  label: string,
  cascaded: readonly string[],
): string {
  const head = `deleted ${kind.noun} ${label}`;
  if (cascaded.length === 0) return `${head}\n`;
  if (cascaded.length === 1) return `${head} and its role binding ${cascaded[0]}\n`;
  return `${head} and its ${cascaded.length} role bindings: ${cascaded.join(', ')}\n`;
}
