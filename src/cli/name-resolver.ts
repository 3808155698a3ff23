import { isValidUidp, parentOf } from '../core/uidp.js';
import type { Session } from './api-session.js';
import { bindingArgs } from './binding-by-names.js';
import { CliError, EXIT, rpcFailure, unreachable } from './cli-errors.js';
import { closestNames } from './name-suggestions.js';
import { kindOf, type Item, type ResourceKind } from './resource-kinds.js';

/**
 * Names wherever the CLI takes a uid. A value that is a uid path is used as it is; anything
 * else is a name or a path of names (`acme/platform`, `acme/platform/ci`, `editor`) that the
 * API resolves (`groups:resolve`, `identities:resolve`, `roles:resolve`), or, for the other
 * named kinds (repos, tags, identity providers, subscriptions), the group path and a List by
 * exact name. An unknown name fails as "no group named X" with the visible names nearest to
 * it; an ambiguous one lists the candidates the caller can see.
 */

type Opts = Record<string, unknown>;

interface Status {
  code?: number;
  message?: string;
  details?: {
    '@type'?: string;
    violations?: { type?: string; subject?: string; description?: string }[];
  }[];
}

type Got = { ok: true; data: Item } | { ok: false; status: number; error: Status };

type Get = (
  path: string,
  init: { params: { query: Record<string, string> } },
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

const GROUPS = '/iam/v2beta1/groups';

/** Kinds with no resolve method whose names are unique under their parent (a List finds one). */
const LISTED_BY_NAME: Readonly<Record<string, 'groups' | 'repos'>> = {
  repos: 'groups',
  subscriptions: 'groups',
  'identity-providers': 'groups',
  tags: 'repos',
};

async function get(s: Session, path: string, query: Record<string, string>): Promise<Got> {
  let answer: Awaited<ReturnType<Get>>;
  try {
    answer = await (s.client as unknown as { GET: Get }).GET(path, { params: { query } });
  } catch (e) {
    throw unreachable(s.api, e);
  }
  if (answer.error === undefined && answer.response.ok)
    return { ok: true, data: answer.data as Item };
  return { ok: false, status: answer.response.status, error: (answer.error ?? {}) as Status };
}

async function listNamed(
  s: Session,
  path: string,
  plural: string,
  query: Record<string, string>,
): Promise<Item[]> {
  const r = await get(s, path, { page_size: '200', ...query });
  if (!r.ok) throw rpcFailure(r.error, r.status);
  return (r.data[plural] as Item[] | undefined) ?? [];
}

/** The answer of one resolve call (the API's, or the List a kind without one uses). */
async function lookUp(s: Session, command: string, value: string, group?: string): Promise<Got> {
  switch (command) {
    case 'groups':
      return get(s, `${GROUPS}:resolve`, { path: value });
    case 'identities':
      return get(s, '/iam/v2beta1/identities:resolve', { path: value });
    case 'roles':
      return get(s, '/iam/v2beta1/roles:resolve', { name: value, ...(group ? { group } : {}) });
  }
  const kind = kindOf(command)!;
  const cut = value.lastIndexOf('/');
  if (cut < 0) return { ok: false, status: 404, error: { code: 5 } };
  const parent = await lookUp(s, LISTED_BY_NAME[command]!, value.slice(0, cut));
  if (!parent.ok) return parent;
  const query = { 'uidp.children_of': String(parent.data.uid), name: value.slice(cut + 1) };
  const items = await listNamed(s, kind.path, kind.plural, query);
  if (items.length === 1) return { ok: true, data: items[0]! };
  if (items.length === 0) return { ok: false, status: 404, error: { code: 5 } };
  const violations = items.map((i) => ({
    type: 'AMBIGUOUS_NAME',
    subject: String(i.uid),
    description: `${kind.noun} ${value}`,
  }));
  return { ok: false, status: 400, error: { code: 9, details: [{ violations }] } };
}

/** The kinds whose names resolve; the rest (role bindings, invites) have uids only. */
const NAMED = new Set(['groups', 'identities', 'roles', ...Object.keys(LISTED_BY_NAME)]);

const nounOf = (command: string) => kindOf(command)?.noun ?? command;

/**
 * `value` as a uid: as it is when it is one, else the uid of what the name means to the
 * caller. `group`: for a role, the group (a uid) it is to be used at.
 * @throws CliError NOT_FOUND ("no group named …", with "did you mean …?"), INVALID for an
 *   ambiguous name (its candidates listed), or the API's refusal as every call reports it.
 */
export async function resolveUid(
  s: Session,
  command: string,
  value: string,
  group?: string,
): Promise<string> {
  if (isValidUidp(value) || !NAMED.has(command)) return value;
  const r = await lookUp(s, command, value, group);
  if (r.ok) return String(r.data.uid);
  const noun = nounOf(command);
  const candidates = (r.error.details ?? [])
    .flatMap((d) => d.violations ?? [])
    .filter((v) => v.type === 'AMBIGUOUS_NAME');
  if (r.error.code === 9 && candidates.length > 0)
    throw new CliError(
      `${value} names ${candidates.length} ${noun === 'identity' ? 'identities' : `${noun}s`} you can see: give one of their uids`,
      EXIT.INVALID,
      candidates.map((c) => `  ${c.subject ?? '?'}  ${c.description ?? ''}`),
    );
  if (r.error.code !== 5) throw rpcFailure(r.error, r.status);
  const near = await suggestions(s, command, value).catch(() => []);
  throw new CliError(
    `no ${noun} named ${value}`,
    EXIT.NOT_FOUND,
    near.length > 0 ? [`  did you mean ${near.join(' or ')}?`] : [],
  );
}

/** Whether `value` means exactly one resource (a suggestion worth making). */
async function resolves(s: Session, command: string, value: string): Promise<boolean> {
  return (await lookUp(s, command, value)).ok;
}

/** The names of the groups where the caller's view of the tree begins (one page). */
async function topNames(s: Session): Promise<string[]> {
  const items = await listNamed(s, GROUPS, 'groups', { order_by: 'name' });
  const seen = new Set(items.map((g) => String(g.uid)));
  return items
    .filter((g) => {
      const p = parentOf(String(g.uid));
      return p === undefined || !seen.has(p);
    })
    .map((g) => String(g.name));
}

/** The names of one kind's items directly under `parent` (one page). */
async function childNames(s: Session, command: string, parent: string): Promise<string[]> {
  const kind = kindOf(command)!;
  const items = await listNamed(s, kind.path, kind.plural, { 'uidp.children_of': parent });
  return items.map((i) => String(i.name));
}

/**
 * Paths near `value` that do resolve: the deepest prefix the caller can see is found, and
 * the name after it is compared with the names there.
 */
async function suggestions(s: Session, command: string, value: string): Promise<string[]> {
  const segments = value.split('/');
  if (command === 'roles' && segments.length === 1) {
    const roles = await listNamed(s, '/iam/v2beta1/roles', 'roles', {});
    return closestNames(
      value,
      roles.map((r) => String(r.name)),
    );
  }
  const leaf = command === 'groups' ? undefined : command;
  const groupPart = leaf ? segments.slice(0, -1) : segments;
  const parentKind = leaf ? (LISTED_BY_NAME[leaf] ?? 'groups') : 'groups';
  if (leaf && groupPart.length > 0) {
    const parent = await lookUp(s, parentKind, groupPart.join('/'));
    if (parent.ok) {
      const names = await childNames(s, leaf, String(parent.data.uid));
      const name = segments[segments.length - 1]!;
      return closestNames(name, names).map((n) => [...groupPart, n].join('/'));
    }
  }
  if (groupPart.length === 0) return [];
  // The group part is wrong: find where it stops resolving.
  for (let k = groupPart.length - 1; k >= 0; k--) {
    const head = groupPart.slice(0, k);
    let names: string[];
    if (k === 0) names = await topNames(s);
    else {
      const parent = await lookUp(s, 'groups', head.join('/'));
      if (!parent.ok) continue;
      names = await childNames(s, 'groups', String(parent.data.uid));
    }
    const near = closestNames(groupPart[k]!, names);
    const full = near.map((n) => [...head, n, ...segments.slice(k + 1)].join('/'));
    const found: string[] = [];
    for (const f of full) if (await resolves(s, command, f)) found.push(f);
    return found.length > 0 || leaf ? found : near.map((n) => [...head, n].join('/'));
  }
  return [];
}

/** The kind a list or create's `--parent` names: a repo for tags, else a group. */
const parentKindOf = (kind: ResourceKind) => (kind.command === 'tags' ? 'repos' : 'groups');

/** Flags (and list filters) that take a uid of another kind, by commander attribute. */
const REFERENCES: Readonly<Record<string, string>> = {
  identity: 'identities',
  role: 'roles',
  defaultRole: 'roles',
  group: 'groups',
};

/**
 * The uid-taking arguments and flags of `arbor <kind> <verb>`, names resolved to uids: the
 * resource argument of get, update and delete, `--parent` and the subtree flags, and the
 * flags that name an identity, a role or a group. A role is resolved for the group it is to
 * be used at (the parent, the `--group` filter, or the binding's own group).
 */
export async function resolveResourceNames(
  s: Session,
  verb: string,
  kind: ResourceKind,
  args: unknown[],
  o: Opts,
): Promise<{ args: unknown[]; o: Opts }> {
  const out: Opts = { ...o };
  let resolved = [...args];
  if (['get', 'update'].includes(verb) && typeof args[0] === 'string')
    resolved[0] = await resolveUid(s, kind.command, args[0]);
  if (verb === 'delete') {
    const uids: string[] = [];
    for (const v of (args[0] as string[] | undefined) ?? [])
      uids.push(await resolveUid(s, kind.command, v));
    resolved = [uids];
  }
  for (const key of ['parent', 'childrenOf', 'descendantsOf'] as const)
    if (typeof o[key] === 'string') out[key] = await resolveUid(s, parentKindOf(kind), o[key]);
  if (typeof o.group === 'string') out.group = await resolveUid(s, 'groups', o.group);
  // Where a role is to be used: what it is created under, the filter, or the binding's group.
  const at =
    (out.parent as string | undefined) ??
    (out.group as string | undefined) ??
    (verb === 'update' && kind.command !== 'groups' ? parentOf(String(resolved[0])) : undefined);
  for (const [key, command] of Object.entries(REFERENCES)) {
    if (key === 'group' || typeof o[key] !== 'string') continue;
    out[key] = await resolveUid(s, command, o[key], command === 'roles' ? at : undefined);
  }
  if (kind.command === 'role-bindings' && (verb === 'get' || verb === 'delete'))
    resolved = await bindingArgs(s, verb, resolved, out, o);
  return { args: resolved, o: out };
}
