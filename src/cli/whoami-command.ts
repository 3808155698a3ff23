import { decodeJwt } from 'jose';
import { stringify } from 'yaml';
import { call, openSession } from './api-session.js';
import { CliError } from './cli-errors.js';
import { NameBook } from './name-book.js';
import { listItems } from './resource-actions.js';
import type { Item } from './resource-kinds.js';
import { windowText, type Window } from './time-left.js';

/**
 * `arbor whoami`: the identity the current token speaks for, the role bindings of it you
 * can see (each at its group's path of names, `acme/platform`, as every other command
 * names groups), and when the token expires. The admin token is no identity and says so.
 */
export async function whoamiCommand(o: { api?: string; output?: string }): Promise<void> {
  const s = await openSession(o.api);
  let claims: { sub?: string; exp?: number } | undefined;
  try {
    claims = decodeJwt(s.token);
  } catch {
    claims = undefined; // the admin token is an opaque secret
  }
  const sub = claims?.sub;
  const expiry = claims?.exp === undefined ? undefined : new Date(claims.exp * 1000);
  let identity: Item | undefined;
  let bindings: Item[] = [];
  if (sub !== undefined) {
    identity = await call<Item>(s, 'GET', '/iam/v2beta1/identities/{uid}', {
      params: { path: { uid: sub } },
    }).catch((e: unknown) => {
      if (e instanceof CliError) return undefined; // not visible to itself: say what we know
      throw e;
    });
    ({ items: bindings } = await listItems(
      s,
      { path: '/iam/v2beta1/roleBindings', plural: 'roleBindings' },
      { identity: sub, page_size: '200' },
      true,
    ));
  } else {
    // Proves the token works: the admin token is refused like any other when wrong.
    await call(s, 'GET', '/iam/v2beta1/groups', { params: { query: { page_size: 1 } } });
  }
  // Group names repeat across organizations; the path says which one is meant.
  const names = new NameBook(s);
  const paths = await Promise.all(
    bindings.map((b) => names.groupPath(String((b.group as Item).uid))),
  );
  const who = {
    api: s.api,
    tokenSource: s.source,
    identity:
      sub === undefined ? null : { uid: sub, name: nameOf(identity, bindings) ?? s.displayName },
    admin: sub === undefined,
    expiry: expiry?.toISOString() ?? null,
    bindings: bindings.map((b, i) => ({
      uid: b.uid,
      role: (b.role as Item).name,
      group: paths[i],
      groupUid: (b.group as Item).uid,
      // A scheduled or expiring binding says so: a binding not started grants nothing yet.
      ...(b.notBefore ? { notBefore: b.notBefore } : {}),
      ...(b.expireTime ? { expireTime: b.expireTime } : {}),
    })),
  };
  if (o.output === 'json') return void process.stdout.write(`${JSON.stringify(who, null, 2)}\n`);
  if (o.output === 'yaml') return void process.stdout.write(stringify(who));
  process.stdout.write(text(who, expiry));
}

type Who = {
  api: string;
  tokenSource: string;
  identity: { uid: string; name?: string | undefined } | null;
  bindings: Array<{ role: unknown; group: unknown; groupUid: unknown } & Window>;
};

/** whoami for people: aligned lines. */
function text(who: Who, expiry: Date | undefined): string {
  const left = expiry && Math.round((expiry.getTime() - Date.now()) / 60_000);
  const until = expiry
    ? `, expires ${expiry.toISOString()} (${left! > 0 ? `in ${left} min` : 'expired'})`
    : ', does not expire';
  const id = who.identity;
  const lines = [
    `API:       ${who.api}`,
    id === null
      ? 'identity:  none: the admin token (ARBOR_ADMIN_TOKEN), every capability everywhere'
      : `identity:  ${id.name ? `${id.name} ` : ''}${id.uid}`,
    `token:     from ${who.tokenSource}${until}`,
  ];
  if (id !== null) {
    lines.push(who.bindings.length === 0 ? 'bindings:  none you can see' : 'bindings:');
    for (const b of who.bindings)
      lines.push(
        `  ${String(b.role)} at ${String(b.group)}  ${String(b.groupUid)}` +
          (windowText(b) ? `  (${windowText(b)})` : ''),
      );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The identity's name: from its Get, else from a binding (which carries it hydrated: a
 * person's user identity is at the root, where they may not read it).
 */
function nameOf(identity: Item | undefined, bindings: Item[]): string | undefined {
  const names = [identity?.name, (bindings[0]?.identity as Item | undefined)?.name];
  return names.find((n): n is string => typeof n === 'string' && n !== '');
}
