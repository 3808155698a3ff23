import { stringify } from 'yaml';
import { call, openSession } from './api-session.js';
import { CliError, EXIT } from './cli-errors.js';
import { parseDuration } from './duration.js';
import { resolveUid } from './name-resolver.js';

type Opts = Record<string, unknown>;
type Item = Record<string, unknown>;

const PATH = '/iam/v2beta1/accessReviews';
const DAY_MS = 86_400_000;

/** A field of an answer as text: strings and numbers as they are, anything else empty. */
const text = (v: unknown): string =>
  typeof v === 'string' || typeof v === 'number' ? String(v) : '';

function print(o: Opts, item: unknown, lines: () => string): void {
  if (o.output === 'json') process.stdout.write(`${JSON.stringify(item, null, 2)}\n`);
  else if (o.output === 'yaml') process.stdout.write(stringify(item));
  else if (o.output === 'name') process.stdout.write(`${text((item as Item).uid)}\n`);
  else process.stdout.write(`${lines()}\n`);
}

/** Rows as aligned columns, the header first. */
function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [head, ...rows]
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function days(textIn: string, flag: string): number {
  const ms = parseDuration(textIn, flag);
  if (ms % DAY_MS !== 0) throw new CliError(`${flag} takes whole days, like 90d`, EXIT.USAGE);
  return ms / DAY_MS;
}

/** `arbor reviews open --group G --due 14d|TIME [--default keep|expire]`. */
export async function open(_args: unknown[], o: Opts): Promise<number> {
  const s = await openSession(o.api as string | undefined);
  const group = await resolveUid(s, 'groups', o.group as string);
  const due = o.due as string;
  const dueTime =
    /^\d/.test(due) && due.includes('T')
      ? due
      : new Date(Date.now() + parseDuration(due, '--due')).toISOString();
  const r = await call<Item>(s, 'POST', `${PATH}/{uid}`, {
    params: { path: { uid: group } },
    body: { dueTime, defaultDecision: o.default as string },
  });
  print(o, r, () => `opened: ${text(r.uid)} (${text(r.itemCount)} items, due ${text(r.dueTime)})`);
  return EXIT.OK;
}

/** `arbor reviews list [--group G] [--state S]`. */
export async function list(_args: unknown[], o: Opts): Promise<number> {
  const s = await openSession(o.api as string | undefined);
  const group = typeof o.group === 'string' ? await resolveUid(s, 'groups', o.group) : undefined;
  const page = await call<{ accessReviews: Item[] }>(s, 'GET', PATH, {
    params: {
      query: {
        page_size: 200,
        ...(group ? { 'uidp.children_of': group } : {}),
        ...(typeof o.state === 'string' ? { state: o.state } : {}),
      },
    },
  });
  print(o, page.accessReviews, () =>
    table(
      ['STATE', 'DUE', 'DECIDED', 'DEFAULT', 'UID'],
      page.accessReviews.map((r) => [
        text(r.state),
        text(r.dueTime),
        `${text(r.decidedCount)}/${text(r.itemCount)}`,
        text(r.defaultDecision),
        text(r.uid),
      ]),
    ),
  );
  return EXIT.OK;
}

/** `arbor reviews show REVIEW [--undecided]`. */
export async function show(args: unknown[], o: Opts): Promise<number> {
  const s = await openSession(o.api as string | undefined);
  const uid = args[0] as string;
  const review = await call<Item>(s, 'GET', `${PATH}/{uid}`, { params: { path: { uid } } });
  const page = await call<{ items: Item[] }>(s, 'GET', `${PATH}:items`, {
    params: {
      query: { review: uid, page_size: 200, ...(o.undecided ? { decision: 'none' } : {}) },
    },
  });
  const named = (v: unknown) => text((v as Item | undefined)?.name);
  print(o, { ...review, items: page.items }, () =>
    [
      `${text(review.uid)}: ${text(review.state)}, due ${text(review.dueTime)}, ` +
        `${text(review.decidedCount)}/${text(review.itemCount)} decided, default ${text(review.defaultDecision)}`,
      table(
        ['HOLDER', 'ROLE', 'LAST USED', 'UNUSED', 'DECISION', 'ITEM'],
        page.items.map((i) => [
          text(i.holderPath) || named(i.holder),
          text(i.rolePath) || named(i.role),
          text(i.lastUsedTime) || 'never',
          i.unused === true ? 'yes' : '',
          text(i.decision),
          text(i.uid),
        ]),
      ),
    ].join('\n'),
  );
  return EXIT.OK;
}

/** `arbor reviews decide ITEM keep|shorten|remove --reason R [--expire-in D]`. */
export async function decide(args: unknown[], o: Opts): Promise<number> {
  const decision = args[1] as string;
  if (!['keep', 'shorten', 'remove'].includes(decision))
    throw new CliError('the decision is keep, shorten or remove', EXIT.USAGE);
  if ((decision === 'shorten') !== (typeof o.expireIn === 'string'))
    throw new CliError('shorten takes --expire-in, and only shorten does', EXIT.USAGE);
  const s = await openSession(o.api as string | undefined);
  const r = await call<Item>(s, 'POST', `${PATH}:decide`, {
    body: {
      itemUid: args[0] as string,
      decision,
      reason: o.reason as string,
      ...(typeof o.expireIn === 'string'
        ? {
            expireTime: new Date(
              Date.now() + parseDuration(o.expireIn, '--expire-in'),
            ).toISOString(),
          }
        : {}),
    },
  });
  print(
    o,
    r,
    () =>
      `${text(r.uid)}: ${text(r.decision)} (${text(r.holderPath) || named(r.holder)} as ${text(r.rolePath) || named(r.role)})`,
  );
  return EXIT.OK;
}

const named = (v: unknown) => text((v as Item | undefined)?.name);

/** `arbor reviews schedule --group G [--every D --due-in D --default X | --off]`. */
export async function schedule(_args: unknown[], o: Opts): Promise<number> {
  const s = await openSession(o.api as string | undefined);
  const groupUid = await resolveUid(s, 'groups', o.group as string);
  const setting = o.every !== undefined || o.off === true;
  const body = o.off
    ? { groupUid, everyDays: 0 }
    : setting
      ? {
          groupUid,
          everyDays: days(o.every as string, '--every'),
          ...(typeof o.dueIn === 'string' ? { dueInDays: days(o.dueIn, '--due-in') } : {}),
          ...(typeof o.default === 'string' ? { defaultDecision: o.default } : {}),
        }
      : { groupUid };
  const r = await call<Item>(s, 'POST', `${PATH}:${setting ? 'setSchedule' : 'getSchedule'}`, {
    body,
  });
  print(o, r, () =>
    o.off
      ? 'schedule removed'
      : `every ${text(r.everyDays)}d, due in ${text(r.dueInDays)}d, default ${text(r.defaultDecision)}, next ${text(r.nextOpenTime)}`,
  );
  return EXIT.OK;
}
