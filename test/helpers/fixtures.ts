import type { Client } from './server.js';

/** Create a group through the API and return its uid; fails the test loudly otherwise. */
export async function createGroup(
  c: Client,
  name: string,
  parent?: string,
  description?: string,
): Promise<string> {
  const res = await c.post(`/iam/v2beta1/groups${parent ? `/${parent}` : ''}`, {
    name,
    ...(description === undefined ? {} : { description }),
  });
  if (res.status !== 200)
    throw new Error(`create group ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { uid: string }).uid;
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
