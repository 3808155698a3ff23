import { must, type Client } from './server.js';

/** The built-in role named `name`'s uid. */
export async function builtinRoleUid(c: Client, name: string): Promise<string> {
  const { roles } = await must(
    `role ${name}`,
    c.api.GET('/iam/v2beta1/roles', { params: { query: { name } } }),
  );
  const uid = roles[0]?.uid;
  if (!uid) throw new Error(`no role ${name}`);
  return uid;
}

/** `Basic base64(user:password)`, as docker and crane send to a token server. */
export function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/** A Distribution notification envelope with one event per entry. */
export function envelope(...events: Array<Record<string, unknown>>) {
  return {
    events: events.map((e, i) => ({
      id: `evt-${i}-${Math.random().toString(36).slice(2)}`,
      actor: { name: 'someone' },
      source: { addr: 'registry:5000' },
      ...e,
    })),
  };
}

/** A sha256 digest made of one repeated hex character. */
export function digestOf(c: string): string {
  return `sha256:${c.repeat(64)}`;
}
