import { must, type Client } from './server.js';

/** Create a group through the API and return its uid; fails the test loudly otherwise. */
export async function createGroup(
  c: Client,
  name: string,
  parent?: string,
  description?: string,
): Promise<string> {
  const body = { name, ...(description === undefined ? {} : { description }) };
  const group = await must(
    `create group ${name}`,
    parent
      ? c.api.POST('/iam/v2beta1/groups/{uid}', { params: { path: { uid: parent } }, body })
      : c.api.POST('/iam/v2beta1/groups', { body }),
  );
  return group.uid;
}

/** Follow nextPageToken to the end; returns every page's items. */
export async function allPages<T>(c: Client, path: string, key: string): Promise<T[][]> {
  const pages: T[][] = [];
  let token: string | undefined;
  for (let i = 0; i < 1000; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const res = await c.get(token ? `${path}${sep}page_token=${encodeURIComponent(token)}` : path);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    pages.push(res.body[key] as T[]);
    token = res.body.nextPageToken as string | undefined;
    if (!token) return pages;
  }
  throw new Error('too many pages');
}
