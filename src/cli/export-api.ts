import type { ArborClient } from '../client/index.js';
import { AdminTargetError, statusMessage } from './admin-target.js';
import type { TreeBinding, TreeGroup, TreeIdentity, TreeSource } from './tree-source.js';

/** A uid's parent: the path above its last segment (none for an organization). */
function parentOf(uid: string): string | null {
  const i = uid.lastIndexOf('/');
  return i < 0 ? null : uid.slice(0, i);
}

type ListPath = '/iam/v2beta1/groups' | '/iam/v2beta1/identities' | '/iam/v2beta1/roleBindings';

/** The tree through a server's REST API, with the caller's token. */
export function apiTree(client: ArborClient): TreeSource {
  const fail = (error: unknown, response: Response): never => {
    throw new AdminTargetError(statusMessage(error as never, response));
  };
  async function all<T>(path: ListPath, key: string, uid: string): Promise<T[]> {
    const out: T[] = [];
    let pageToken: string | undefined;
    do {
      const query = {
        'uidp.descendants_of': uid,
        page_size: 200,
        ...(pageToken ? { page_token: pageToken } : {}),
      };
      const { data, error, response } = await client.GET(path, { params: { query } });
      if (!data) return fail(error, response);
      out.push(...((data as unknown as Record<string, T[]>)[key] ?? []));
      pageToken = data.nextPageToken;
    } while (pageToken);
    return out;
  }
  const group = (g: { uid: string; name: string; description?: string }): TreeGroup => ({
    ...g,
    parentUid: parentOf(g.uid),
  });
  return {
    group: async (uid) => {
      const { data, error, response } = await client.GET('/iam/v2beta1/groups/{uid}', {
        params: { path: { uid } },
      });
      return data ? group(data) : fail(error, response);
    },
    below: async (uid) => {
      const [groups, identities, bindings] = await Promise.all([
        all<TreeGroup>('/iam/v2beta1/groups', 'groups', uid),
        all<TreeIdentity>('/iam/v2beta1/identities', 'identities', uid),
        all<Omit<TreeBinding, 'parentUid'> & { group: { uid: string } }>(
          '/iam/v2beta1/roleBindings',
          'roleBindings',
          uid,
        ),
      ]);
      return [
        groups.map(group),
        identities.map((i) => ({ ...i, parentUid: parentOf(i.uid) })),
        bindings.map((b) => ({ ...b, parentUid: b.group.uid })),
      ];
    },
  };
}
