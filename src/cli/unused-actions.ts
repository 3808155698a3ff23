import { call, openSession } from './api-session.js';
import { CliError, EXIT } from './cli-errors.js';
import { parseDuration } from './duration.js';
import { resolveUid } from './name-resolver.js';
import { NameBook } from './name-book.js';
import { printerFor, type OutputFormat } from './printers/printer.js';
import { listItems } from './resource-actions.js';
import type { Column, Item } from './resource-kinds.js';

type Opts = Record<string, unknown>;
const DAY_MS = 86_400_000;

const COLUMNS: Column[] = [
  { header: 'KIND', value: (i) => String(i.kind) },
  { header: 'NAME', value: (i) => String(i.shown ?? i.uid), whole: true },
  {
    header: 'LAST USED',
    value: (i) => (typeof i.lastUsedTime === 'string' ? i.lastUsedTime : 'never'),
  },
  { header: 'CREATED', value: (i) => String(i.createTime) },
  { header: 'EXPIRES', value: (i) => (typeof i.expireTime === 'string' ? i.expireTime : '') },
];
const WIDE: Column[] = [
  { header: 'UID', value: (i) => String(i.uid), uid: true },
  { header: 'EXPIRE BINDINGS', value: (i) => bindingsOf(i).join(','), list: true },
];

const bindingsOf = (i: Item) =>
  Array.isArray(i.expireBindings) ? (i.expireBindings as string[]) : [];

/** A window in whole days (`90d`), as the API takes it. @throws CliError (usage). */
function windowOf(text: string): string {
  const ms = parseDuration(text, '--window');
  if (ms % DAY_MS !== 0 || ms < DAY_MS || ms > 365 * DAY_MS)
    throw new CliError(`--window takes whole days from 1d to 365d, not "${text}"`, EXIT.USAGE);
  return `${ms / DAY_MS}d`;
}

/**
 * `arbor access unused [--group G] [--window 90d] [--kind K] [--expire-in 30d]`: the
 * unused-access findings; with `--expire-in`, every binding they name is set to expire
 * then, through the binding update (audited), unless it expires sooner already.
 */
export async function accessUnused(_args: unknown[], o: Opts): Promise<number> {
  const s = await openSession(o.api as string | undefined);
  const query: Record<string, string> = {};
  if (typeof o.group === 'string') query.group = await resolveUid(s, 'groups', o.group);
  if (typeof o.window === 'string') query.window = windowOf(o.window);
  if (typeof o.kind === 'string') query.kind = o.kind;
  if (typeof o.pageSize === 'string') query.page_size = o.pageSize;
  if (typeof o.pageToken === 'string') query.page_token = o.pageToken;
  const expireIn =
    typeof o.expireIn === 'string' ? parseDuration(o.expireIn, '--expire-in') : undefined;
  const all = o.all === true || expireIn !== undefined;
  if (all && query.page_size === undefined) query.page_size = '200';
  const { items, next } = await listItems(
    s,
    { path: '/iam/v2beta1/access:unused', plural: 'findings' },
    query,
    all,
  );
  const format = (o.output ?? 'table') as OutputFormat;
  if (items.length === 0 && (format === 'table' || format === 'wide'))
    process.stderr.write('Nothing you can see is unused for the window.\n');
  const names = new NameBook(s);
  const shown =
    format === 'table' || format === 'wide'
      ? await Promise.all(
          items.map(async (i) => ({
            ...i,
            shown:
              i.kind === 'identity'
                ? await names.identityPath(String(i.uid))
                : `${await names.identityPath(String(i.identityUid))} at ${await names.groupPath(String(i.groupUid))}`,
          })),
        )
      : items;
  process.stdout.write(
    printerFor(format)({ items: shown, single: false, columns: COLUMNS, wide: WIDE }),
  );
  if (next) process.stderr.write(`(more: --page-token ${next}, or --all for every page)\n`);
  if (expireIn !== undefined) await expireAll(s, items, Date.now() + expireIn);
  return EXIT.OK;
}

/** Bring each named binding's expiry forward to `at` (one PATCH each; sooner ones are kept). */
async function expireAll(
  s: Awaited<ReturnType<typeof openSession>>,
  items: Item[],
  at: number,
): Promise<void> {
  const soonest = new Map<string, number | undefined>();
  for (const i of items)
    for (const b of bindingsOf(i))
      soonest.set(
        b,
        i.uid === b && typeof i.expireTime === 'string' ? Date.parse(i.expireTime) : undefined,
      );
  let changed = 0;
  for (const [uid, known] of soonest) {
    const cur =
      known ??
      (await call<{ expireTime?: string }>(s, 'GET', '/iam/v2beta1/roleBindings/{uid}', {
        params: { path: { uid } },
      }).then((b) => (b.expireTime === undefined ? undefined : Date.parse(b.expireTime))));
    if (cur !== undefined && cur <= at) continue;
    await call(s, 'PATCH', '/iam/v2beta1/roleBindings/{uid}', {
      params: { path: { uid }, query: { updateMask: 'expireTime' } },
      body: { expireTime: new Date(at).toISOString() },
    });
    changed++;
  }
  process.stderr.write(
    `${changed} binding(s) set to expire at ${new Date(at).toISOString()}` +
      (soonest.size > changed ? ` (${soonest.size - changed} expire sooner already)\n` : '\n'),
  );
}
