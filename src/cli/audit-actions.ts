import { stringify } from 'yaml';
import { openSession, type Session } from './api-session.js';
import { CliError, EXIT } from './cli-errors.js';
import { parseTimeOrAgo } from './duration.js';
import { NameBook } from './name-book.js';
import { resolveUid } from './name-resolver.js';
import { printerFor, type OutputFormat } from './printers/printer.js';
import { listItems } from './resource-actions.js';
import type { Column, Item } from './resource-kinds.js';

type Opts = Record<string, unknown>;

const str = (v: unknown) => (typeof v === 'string' ? v : '');
/** `iam.arbor.dev/Group` → `Group`. */
const kindOf = (type: string) => type.slice(type.lastIndexOf('/') + 1);

const COLUMNS: Column[] = [
  { header: 'TIME', value: (e) => str(e.time).replace('T', ' ').slice(0, 19) },
  { header: 'ACTOR', value: (e) => str(e.actorName) || str(e.actor), whole: true },
  { header: 'OPERATION', value: (e) => str(e.operation), whole: true },
  { header: 'KIND', value: (e) => kindOf(str(e.resourceType)), whole: true },
  { header: 'RESOURCE', value: (e) => str(e.resourceName), whole: true },
  { header: 'RESOURCE UID', value: (e) => str(e.resourceUid), uid: true },
];
const WIDE: Column[] = [
  { header: 'CHANGED', value: (e) => ((e.changedFields as string[]) ?? []).join(','), list: true },
  { header: 'DOOR', value: (e) => str(e.door) },
  { header: 'REQUEST ID', value: (e) => str(e.requestId) },
];

/** The name an event's resource had: after the change, or before a delete. */
function resourceName(e: Item): string {
  const name = sideOf(e).name;
  return typeof name === 'string' ? name : '';
}

/** The resource as the record shows it: after the change, or before a delete. */
function sideOf(e: Item): Item {
  for (const side of [e.after, e.before])
    if (typeof side === 'object' && side !== null) return side as Item;
  return {};
}

const refUid = (v: unknown): string =>
  typeof v === 'object' && v !== null && typeof (v as Item).uid === 'string'
    ? String((v as Item).uid)
    : '';

/**
 * What the RESOURCE column reads, for every kind: the path the API gives (a named resource
 * the caller may see), else a role binding or an access request by what it grants
 * (`acme/ci as viewer at acme/platform`, read through the Gets, so only what the caller
 * may see is named), else the name in the record.
 */
async function resourceLabel(names: NameBook, e: Item): Promise<string> {
  if (typeof e.resourcePath === 'string') return e.resourcePath;
  const side = sideOf(e);
  const kind = kindOf(str(e.resourceType));
  const [identity, role, group] =
    kind === 'RoleBinding'
      ? [refUid(side.identity), refUid(side.role), refUid(side.group)]
      : kind === 'AccessRequest'
        ? [str(side.requesterUid), str(side.roleUid), str(side.groupUid)]
        : ['', '', ''];
  if (identity === '' || role === '' || group === '') return resourceName(e);
  const [who, what, where] = await Promise.all([
    names.identityPath(identity),
    names.rolePath(role),
    names.groupPath(group),
  ]);
  return kind === 'RoleBinding'
    ? `${who} as ${what} at ${where}`
    : `${who} asks ${what} at ${where}`;
}

/**
 * What the ACTOR column reads: the actor's name; for a change made with a delegated token,
 * the chain as it happened, "agent for person" (`acme/agent for acme/ci`; a longer chain:
 * who acted for the one acting for the subject first), each by the path the API gave.
 */
async function actorLabel(names: NameBook, e: Item): Promise<string> {
  const subject = str(e.actorPath) || (await names.actor(str(e.actor)));
  if (!Array.isArray(e.actors)) return subject;
  const actors = await Promise.all(
    (e.actors as Item[]).map(async (a) => str(a.path) || (await names.identityPath(str(a.uid)))),
  );
  return [...actors.reverse(), subject].join(' for ');
}

/** Flags → the audit API's query: only the filters that API has (docs/cli.md, "audit"). */
function auditQuery(resource: string | undefined, o: Opts): Record<string, string> {
  const q: Record<string, string> = {};
  if (resource !== undefined && typeof o.subtree === 'string')
    throw new CliError('give a resource or --subtree, not both', EXIT.USAGE);
  if (resource !== undefined) q.resource_uid = resource;
  if (typeof o.subtree === 'string') q['uidp.descendants_of'] = o.subtree;
  if (typeof o.actor === 'string')
    // A bare uid is an identity's; `admin` and `system:<name>` are as the API spells them.
    q.actor = /^[0-9a-f]{40}(\/[0-9a-f]{16})*$/.test(o.actor) ? `identity:${o.actor}` : o.actor;
  if (typeof o.operation === 'string') q.operation = o.operation;
  if (typeof o.kind === 'string')
    q.resource_type = o.kind.includes('/') ? o.kind : `iam.arbor.dev/${o.kind}`;
  if (typeof o.door === 'string') q.door = o.door;
  if (typeof o.since === 'string') q.start_time = parseTimeOrAgo(o.since, '--since');
  if (typeof o.until === 'string') q.end_time = parseTimeOrAgo(o.until, '--until');
  if (typeof o.pageSize === 'string') q.page_size = o.pageSize;
  if (typeof o.pageToken === 'string') q.page_token = o.pageToken;
  if (o.all === true && q.page_size === undefined) q.page_size = '200';
  if (o.oldestFirst === true) q.order_by = 'time asc';
  return q;
}

/**
 * The audited object by name: a group path, else an identity (`acme/ci`); a uid as it is.
 * Other kinds are named by uid (their audit records carry it).
 */
async function resourceUid(s: Session, value: string | undefined): Promise<string | undefined> {
  if (value === undefined) return undefined;
  try {
    return await resolveUid(s, 'groups', value);
  } catch (e) {
    if (!(e instanceof CliError) || e.exitCode !== EXIT.NOT_FOUND || !value.includes('/')) throw e;
    return resolveUid(s, 'identities', value);
  }
}

/** `--actor`: `admin`, `system:<name>`, an identity's uid, or its name (`acme/ci`). */
async function actorOf(s: Session, actor: string): Promise<string> {
  if (actor === 'admin' || actor.includes(':')) return actor;
  return resolveUid(s, 'identities', actor);
}

/**
 * `arbor audit [RESOURCE] [--subtree G] [--actor A] [--operation OP] [--since T] [--until T]`:
 * the audit trail you may read, newest first, with names beside uids.
 */
export async function auditCommand(args: unknown[], o: Opts): Promise<number> {
  auditQuery(args[0] as string | undefined, o); // usage errors before any call
  const s = await openSession(o.api as string | undefined);
  const query = auditQuery(await resourceUid(s, args[0] as string | undefined), {
    ...o,
    ...(typeof o.subtree === 'string' ? { subtree: await resolveUid(s, 'groups', o.subtree) } : {}),
    ...(typeof o.actor === 'string' ? { actor: await actorOf(s, o.actor) } : {}),
  });
  const { items, next } = await listItems(
    s,
    { path: '/audit/v2beta1/events', plural: 'events' },
    query,
    o.all === true,
  );
  const format = (o.output ?? 'table') as OutputFormat;
  if (format === 'json') process.stdout.write(`${JSON.stringify(items, null, 2)}\n`);
  else if (format === 'yaml') process.stdout.write(stringify(items));
  else if (format === 'name') process.stdout.write(items.map((e) => `${str(e.id)}\n`).join(''));
  else {
    if (items.length === 0) process.stderr.write('No audit event you can see matches.\n');
    const names = new NameBook(s);
    const shown = await Promise.all(
      items.map(async (e) => ({
        ...e,
        actorName: await actorLabel(names, e),
        resourceName: await resourceLabel(names, e),
      })),
    );
    process.stdout.write(
      printerFor(format)({ items: shown, single: false, columns: COLUMNS, wide: WIDE }),
    );
  }
  if (next) process.stderr.write(`(more: --page-token ${next}, or --all for every page)\n`);
  return EXIT.OK;
}
