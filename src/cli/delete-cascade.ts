import { call, type Session } from './api-session.js';
import type { ResourceKind } from './resource-kinds.js';

interface BindingPage {
  roleBindings?: Array<{ uid: string }>;
  nextPageToken?: string;
}

/**
 * The role bindings that deleting `uid` takes along, read before the delete: an identity's
 * delete revokes every binding that names it, and DELETE answers an empty body. Only what
 * the caller may list is counted; a kind that takes nothing along answers [] unasked.
 * @returns binding uids; [] when they cannot be listed (the delete itself will say why).
 */
export async function cascadeOf(s: Session, kind: ResourceKind, uid: string): Promise<string[]> {
  if (kind.command !== 'identities') return [];
  const uids: string[] = [];
  let token: string | undefined;
  try {
    do {
      const query = { identity: uid, page_size: '200', ...(token ? { page_token: token } : {}) };
      const page = await call<BindingPage>(s, 'GET', '/iam/v2beta1/roleBindings', {
        params: { query },
      });
      uids.push(...(page.roleBindings ?? []).map((b) => b.uid));
      token = page.nextPageToken;
    } while (token);
  } catch {
    return [];
  }
  return uids;
}

/** `deleted identity X and its 2 role bindings: B1, B2`. */
export function deletedLine(kind: ResourceKind, uid: string, cascaded: readonly string[]): string {
  const head = `deleted ${kind.noun} ${uid}`;
  if (cascaded.length === 0) return `${head}\n`;
  if (cascaded.length === 1) return `${head} and its role binding ${cascaded[0]}\n`;
  return `${head} and its ${cascaded.length} role bindings: ${cascaded.join(', ')}\n`;
}
