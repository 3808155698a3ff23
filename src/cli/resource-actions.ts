import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { call, openSession, type Session } from './api-session.js';
import { CliError, EXIT } from './cli-errors.js';
import { cascadeOf, deletedLabel, deletedLine } from './delete-cascade.js';
import { resolveResourceNames } from './name-resolver.js';
import { parseDuration } from './duration.js';
import { NameBook } from './name-book.js';
import { printerFor, type OutputFormat } from './printers/printer.js';
import {
  groupUidOf,
  withArticle,
  type Field,
  type Item,
  type ResourceKind,
} from './resource-kinds.js';

type Opts = Record<string, unknown>;

interface ListAnswer {
  nextPageToken?: string;
  totalCount?: string;
  [plural: string]: unknown;
}

/** Flags → the API's list query (`--descendants-of` → `uidp.descendants_of`, …). */
function listQuery(kind: ResourceKind, o: Opts): Record<string, string> {
  const q: Record<string, string> = {};
  const set = (key: string, v: unknown) => {
    if (typeof v === 'string') q[key] = v;
  };
  if (o.parent !== undefined && o.childrenOf !== undefined && o.parent !== o.childrenOf)
    throw new CliError('--parent and --children-of say the same thing: give one', EXIT.USAGE);
  set('uidp.children_of', o.parent ?? o.childrenOf);
  set('uidp.descendants_of', o.descendantsOf);
  set('order_by', o.orderBy);
  set('page_size', o.pageSize ?? (o.all ? '200' : undefined));
  set('page_token', o.pageToken);
  set('skip', o.skip);
  set('name', o.name);
  for (const f of Object.keys(kind.filters ?? {})) set(f, o[f]);
  return q;
}

/**
 * One page, or with `all` every page (following nextPageToken).
 * @returns the items and the token of the next page when there is one and `all` is off.
 */
export async function listItems(
  s: Session,
  kind: Pick<ResourceKind, 'path' | 'plural'>,
  query: Record<string, string>,
  all: boolean,
): Promise<{ items: Item[]; next?: string }> {
  const items: Item[] = [];
  let token = query.page_token;
  for (;;) {
    const page = await call<ListAnswer>(s, 'GET', kind.path, {
      params: { query: { ...query, ...(token ? { page_token: token } : {}) } },
    });
    items.push(...((page[kind.plural] as Item[] | undefined) ?? []));
    token = page.nextPageToken;
    if (!token) return { items };
    if (!all) return { items, next: token };
  }
}

/**
 * The body from `-f` (JSON or YAML, `-` for standard input), then the field flags over it;
 * a `for` duration last, from the body's start (`notBefore`), else from `start` (an update:
 * the binding's own), else from now.
 * @throws CliError (usage) for two flags that set the same field (`--for` and `--expire-time`).
 */
async function bodyOf(kind: ResourceKind, o: Opts, start?: unknown): Promise<Item> {
  let body: Item = {};
  if (typeof o.file === 'string') {
    const text =
      o.file === '-'
        ? await new Promise<string>((resolve, reject) => {
            let t = '';
            process.stdin.setEncoding('utf8');
            process.stdin.on('data', (c: string) => (t += c));
            process.stdin.on('end', () => resolve(t));
            process.stdin.on('error', reject);
          })
        : await readFile(o.file, 'utf8').catch((e: NodeJS.ErrnoException) => {
            throw new CliError(`cannot read ${String(o.file)}: ${e.code ?? e.message}`, EXIT.USAGE);
          });
    let parsed: unknown;
    try {
      parsed = parseYaml(text); // YAML is a superset of JSON
    } catch (e) {
      throw new CliError(
        `${String(o.file)} is not JSON or YAML: ${(e as Error).message}`,
        EXIT.USAGE,
      );
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new CliError(`${String(o.file)} must hold one object`, EXIT.USAGE);
    body = parsed as Item;
  }
  const given = kind.fields.filter((f) => o[attrOf(f)] !== undefined);
  for (const f of given) {
    const twin = given.find((g) => g !== f && g.key === f.key);
    if (twin)
      throw new CliError(
        `${flagOf(f)} and ${flagOf(twin)} say the same thing: give one`,
        EXIT.USAGE,
      );
  }
  // A duration from the start goes last, when the start is known.
  const last = (f: Field) => (f.from === 'for' ? 1 : 0);
  for (const f of [...given].sort((x, y) => last(x) - last(y))) {
    const begin = body.notBefore ?? start;
    const from = typeof begin === 'string' ? Date.parse(begin) : Number.NaN;
    setField(
      body,
      f.key,
      await fieldValue(f, o[attrOf(f)], Number.isNaN(from) ? Date.now() : from),
    );
  }
  return body;
}

const flagOf = (f: Field) => f.flag.split(' ')[0]!;
/** `--not-before <time>` → `notBefore`, as commander names the option. */
const attrOf = (f: Field) =>
  flagOf(f)
    .replace(/^--/, '')
    .replace(/-(\w)/g, (_, c: string) => c.toUpperCase());

/** A flag's text as its field wants it (resource-kinds.ts `Field.from`); `start` for `for`. */
async function fieldValue(f: Field, v: unknown, start: number): Promise<unknown> {
  const flag = flagOf(f);
  switch (f.from) {
    case 'pairs': {
      const pairs: Record<string, string> = {};
      for (const p of v as string[]) {
        const eq = p.indexOf('=');
        if (eq <= 0) throw new CliError(`${flag} takes name=value, not "${p}"`, EXIT.USAGE);
        pairs[p.slice(0, eq)] = p.slice(eq + 1);
      }
      return pairs;
    }
    case 'file':
      return readFile(String(v), 'utf8').catch((e: NodeJS.ErrnoException) => {
        throw new CliError(`cannot read ${String(v)}: ${e.code ?? e.message}`, EXIT.USAGE);
      });
    case 'in':
      return new Date(Date.now() + parseDuration(String(v), flag)).toISOString();
    case 'for':
      return new Date(start + parseDuration(String(v), flag)).toISOString();
    default:
      return v;
  }
}

/** `claimMatch.issuer` → body.claimMatch.issuer (the objects on the way made as needed). */
function setField(body: Item, key: string, value: unknown): void {
  const path = key.split('.');
  let at = body;
  for (const k of path.slice(0, -1)) {
    if (typeof at[k] !== 'object' || at[k] === null) at[k] = {};
    at = at[k] as Item;
  }
  at[path[path.length - 1]!] = value;
}

async function print(
  s: Session,
  kind: ResourceKind,
  format: OutputFormat,
  items: Item[],
  single: boolean,
): Promise<void> {
  const table = format === 'table' || format === 'wide';
  if (!single && items.length === 0 && table)
    process.stderr.write(`No ${kind.command.replace('-', ' ')} found.\n`);
  // A binding's or an invite's group by its path of names (the API gives a name or only
  // the uid), for people only.
  if (table && (kind.command === 'role-bindings' || kind.command === 'invites')) {
    const names = new NameBook(s);
    items = await Promise.all(
      items.map(async (b) => {
        const uid = groupUidOf(b);
        return uid ? { ...b, groupPath: await names.groupPath(uid) } : b;
      }),
    );
  }
  process.stdout.write(
    printerFor(format)({ items, single, columns: kind.columns, wide: kind.wide }),
  );
}

const item = (template: string, uid: string) => ({ template, init: { params: { path: { uid } } } });

/** Runs `arbor <kind> <verb>`; failures are thrown as CliError for runCli to report. */
export async function runResourceCommand(
  verb: string,
  kind: ResourceKind,
  given: unknown[],
  flags: Opts,
): Promise<void> {
  const s = await openSession(flags.api as string | undefined);
  const { args, o } = await resolveResourceNames(s, verb, kind, given, flags);
  const format = (o.output ?? 'table') as OutputFormat;
  const one = `${kind.path}/{uid}`;
  switch (verb) {
    case 'list': {
      const { items, next } = await listItems(s, kind, listQuery(kind, o), o.all === true);
      await print(s, kind, format, items, false);
      if (next) process.stderr.write(`(more: --page-token ${next}, or --all for every page)\n`);
      return;
    }
    case 'get': {
      const { template, init } = item(one, args[0] as string);
      await print(s, kind, format, [await call<Item>(s, 'GET', template, init)], true);
      return;
    }
    case 'create': {
      const body = await bodyOf(kind, o);
      const parent = o.parent as string | undefined;
      if (parent === undefined && !kind.rootCreate)
        throw new CliError(
          `${withArticle(kind.noun)} is created in a group: give --parent <group>`,
          EXIT.USAGE,
        );
      const created =
        parent === undefined
          ? await call<Item>(s, 'POST', kind.path, { body })
          : await call<Item>(s, 'POST', one, { params: { path: { uid: parent } }, body });
      await print(s, kind, format, [created], true);
      return;
    }
    case 'update': {
      // A duration from the start counts from a scheduled binding's start when it is still
      // to come (from now once it has come): read it first.
      const notBefore = kind.fields.some((f) => f.from === 'for' && o[attrOf(f)] !== undefined)
        ? (await call<Item>(s, 'GET', one, { params: { path: { uid: args[0] as string } } }))
            .notBefore
        : undefined;
      const start =
        typeof notBefore === 'string' && Date.parse(notBefore) > Date.now() ? notBefore : undefined;
      const body = await bodyOf(kind, o, start);
      const mask = (o.updateMask as string | undefined) ?? Object.keys(body).join(',');
      if (mask === '')
        throw new CliError(
          'nothing to change: give the fields to update, or -f <file>',
          EXIT.USAGE,
        );
      const uid = args[0] as string;
      const updated = await call<Item>(s, 'PATCH', one, {
        params: { path: { uid }, query: { updateMask: mask } },
        body,
      });
      await print(s, kind, format, [updated], true);
      return;
    }
    case 'delete':
      for (const uid of args[0] as string[]) {
        // Named before the delete: afterwards there is nothing to read the names from.
        const names = new NameBook(s);
        const label = await deletedLabel(s, names, kind, uid);
        const cascaded = await cascadeOf(s, kind, uid, names);
        await call(s, 'DELETE', one, { params: { path: { uid } } });
        process.stdout.write(deletedLine(kind, label, cascaded));
      }
      return;
    default:
      throw new CliError(`unknown verb ${verb}`, EXIT.USAGE);
  }
}
