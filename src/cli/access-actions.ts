import { readFile } from 'node:fs/promises';
import { parse as parseYaml, stringify } from 'yaml';
import { call, openSession, type Session } from './api-session.js';
import { requireCapability } from './capability-words.js';
import { CliError, EXIT } from './cli-errors.js';
import { resolveUid } from './name-resolver.js';
import { NameBook } from './name-book.js';
import { printerFor, type OutputFormat } from './printers/printer.js';
import type { Column, Item } from './resource-kinds.js';
import {
  actingForNote,
  conditionalHolderRows,
  conditionalLines,
  conditionText,
  delegationLines,
  partialNote,
  pendingLines,
  roleOf,
  whenText,
  type ActingFor,
  type ConditionWords,
  type Coverage,
  type PendingProof,
  type Proof,
} from './access-notes.js';

type Opts = Record<string, unknown>;

/** `can-i` and `test-token` say "no" with this status (as `kubectl auth can-i` does). */
export const EXIT_NO = 1;

/** Every page (or one) of an access list, and whether it says it is partial. */
async function accessList(
  s: Session,
  kind: { path: string; plural: string },
  query: Record<string, string>,
  all: boolean,
): Promise<{ items: Item[]; next?: string; coverage: Coverage; extras: AccessExtras }> {
  const items: Item[] = [];
  let token = query.page_token;
  let extras: AccessExtras | undefined;
  // Every page of one question says the same (the caller's grants decide it): the last read.
  for (;;) {
    const page = await call<Record<string, unknown> & Coverage & { nextPageToken?: string }>(
      s,
      'GET',
      kind.path,
      { params: { query: { ...query, ...(token ? { page_token: token } : {}) } } },
    );
    items.push(...((page[kind.plural] as Item[] | undefined) ?? []));
    // Conditional holders and delegations come with the first page; actingFor with every one.
    extras ??= page as AccessExtras;
    token = page.nextPageToken;
    const coverage = { partial: page.partial, countedFrom: page.countedFrom };
    if (!token || !all) return { items, ...(token ? { next: token } : {}), coverage, extras };
  }
}

/** What who-can and what-can answer beside their page. */
interface AccessExtras {
  conditionalHolders?: Item[];
  conditionalHoldersTruncated?: boolean;
  delegations?: Parameters<typeof delegationLines>[1];
  actingFor?: ActingFor;
}

/** A token that is no JWT speaks for no identity: the admin token (or a development run's). */
const isAdminToken = (s: Session) => s.token.split('.').length !== 3;

/**
 * `can-i` with the admin token and no `--as`: it holds every capability everywhere, so the
 * answer is yes wherever the group exists (its Get proves the token and the group).
 */
async function adminCanI(s: Session, group: string, o: Opts): Promise<number> {
  await call(s, 'GET', '/iam/v2beta1/groups/{uid}', { params: { path: { uid: group } } });
  const r = { allowed: true, admin: true, grants: [] };
  if (o.output === 'json') process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  else if (o.output === 'yaml') process.stdout.write(stringify(r));
  else {
    process.stdout.write('yes\n');
    if (o.explain === true)
      process.stdout.write('granted by: the admin token (every capability everywhere)\n');
  }
  return EXIT.OK;
}

/**
 * The request a check asks about (`--resource-type`, `--resource-name`, `--claim k=v`), as
 * the check's `resource` and `claims`: conditional bindings are evaluated with them.
 */
function askedRequest(o: Opts): { resource?: { type: string; name: string }; claims?: object } {
  const type = o.resourceType as string | undefined;
  const name = o.resourceName as string | undefined;
  const claims: Record<string, string> = {};
  for (const p of (o.claim as string[] | undefined) ?? []) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new CliError(`--claim takes name=value, not "${p}"`, EXIT.USAGE);
    claims[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return {
    ...(type !== undefined || name !== undefined
      ? { resource: { type: type ?? '', name: name ?? '' } }
      : {}),
    ...(o.claim !== undefined ? { claims } : {}),
  };
}

/**
 * `arbor can-i CAP --group G [--as IDENTITY] [--explain] [--resource-type T]
 * [--resource-name N] [--claim k=v]…`: yes (exit 0) or no (exit 1).
 */
export async function canI(args: unknown[], o: Opts): Promise<number> {
  requireCapability(args[0] as string);
  const s = await openSession(o.api as string | undefined);
  if (typeof o.as !== 'string' && isAdminToken(s))
    return adminCanI(s, await resolveUid(s, 'groups', o.group as string), o);
  const body = {
    capability: args[0] as string,
    groupUid: await resolveUid(s, 'groups', o.group as string),
    ...(typeof o.as === 'string' ? { identityUid: await resolveUid(s, 'identities', o.as) } : {}),
    ...askedRequest(o),
  };
  const r = await call<
    {
      allowed: boolean;
      grants: Proof[];
      pending?: PendingProof[];
      conditional?: Proof[];
      actingFor?: ActingFor;
    } & Coverage
  >(s, 'POST', '/iam/v2beta1/access:check', { body });
  const code = r.allowed ? EXIT.OK : EXIT_NO;
  if (o.output === 'json') process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  else if (o.output === 'yaml') process.stdout.write(stringify(r));
  else {
    process.stdout.write(r.allowed ? 'yes\n' : 'no\n');
    if (o.explain === true && r.allowed) {
      const names = new NameBook(s);
      const lines = await Promise.all(
        r.grants.map(
          async (g) =>
            `  role ${roleOf(g)} bound at ${await names.groupPath(g.groupUid)} (binding ${g.bindingUid})\n` +
            `    path: ${(await Promise.all(g.path.map((p) => names.groupPath(p)))).join(' > ')}` +
            (g.condition ? `\n    ${conditionText(g.condition)}` : ''),
        ),
      );
      process.stdout.write(`granted by:\n${lines.join('\n')}\n`);
    }
    if (o.explain === true && !r.allowed)
      process.stdout.write(
        r.conditional?.length
          ? await conditionalLines(new NameBook(s), r.conditional)
          : r.pending?.length
            ? await pendingLines(new NameBook(s), r.pending)
            : 'no binding you can see grants it there or above\n',
      );
  }
  process.stderr.write(await actingForNote(new NameBook(s), r.actingFor));
  const note = await partialNote(new NameBook(s), r, 'bindings');
  if (note) process.stderr.write(note);
  return code;
}

const HOLDER_COLUMNS: Column[] = [
  {
    header: 'IDENTITY',
    value: (i) => (typeof i.identityPath === 'string' ? i.identityPath : ''),
    whole: true,
  },
  { header: 'ROLES', value: (i) => proofs(i).map(roleOf).join(','), whole: true },
  {
    header: 'BOUND AT',
    value: (i) => (typeof i.boundAt === 'string' ? i.boundAt : ''),
    whole: true,
  },
  { header: 'IDENTITY UID', value: (i) => String(i.identityUid), uid: true },
];
const HOLDER_WIDE: Column[] = [
  {
    header: 'BOUND AT UID',
    value: (i) =>
      proofs(i)
        .map((p) => p.groupUid)
        .join(','),
    uid: true,
  },
  {
    header: 'BINDINGS',
    value: (i) =>
      proofs(i)
        .map((p) => p.bindingUid)
        .join(','),
    uid: true,
  },
];
const proofs = (i: Item) => (i.grants as Proof[] | undefined) ?? [];

/** `arbor who-can CAP --group G`: the holders, as a table, JSON or YAML, page by page. */
export async function whoCan(args: unknown[], o: Opts): Promise<number> {
  requireCapability(args[0] as string);
  const s = await openSession(o.api as string | undefined);
  const group = await resolveUid(s, 'groups', o.group as string);
  const query: Record<string, string> = { group, capability: args[0] as string };
  for (const [flag, key] of [
    ['orderBy', 'order_by'],
    ['pageSize', 'page_size'],
    ['pageToken', 'page_token'],
  ] as const)
    if (typeof o[flag] === 'string') query[key] = o[flag];
  if (o.all === true && query.page_size === undefined) query.page_size = '200';
  const { items, next, coverage, extras } = await accessList(
    s,
    { path: '/iam/v2beta1/access:whoCan', plural: 'identities' },
    query,
    o.all === true,
  );
  const format = (o.output ?? 'table') as OutputFormat;
  const table = format === 'table' || format === 'wide';
  // A table shows the conditional holders too, each role marked "when …"; JSON, YAML and
  // names stay the holders alone (the API's `identities`), as scripts count them.
  const rows = table ? [...items, ...conditionalHolderRows(extras.conditionalHolders)] : items;
  if (rows.length === 0 && table) process.stderr.write('No identity you can see holds it there.\n');
  // `-o name`: one identity uid a line; a table names identities and groups by path.
  const shown =
    format === 'name'
      ? items.map((i) => ({ uid: i.identityUid }))
      : table
        ? await named(s, rows)
        : items;
  process.stdout.write(
    printerFor(format)({ items: shown, single: false, columns: HOLDER_COLUMNS, wide: HOLDER_WIDE }),
  );
  if (table) process.stdout.write(await delegationLines(new NameBook(s), extras.delegations));
  if (table && extras.conditionalHoldersTruncated)
    process.stderr.write('(more identities hold it only conditionally than are shown)\n');
  const note = await partialNote(new NameBook(s), coverage, 'holders');
  if (note) process.stderr.write(note);
  if (next) process.stderr.write(`(more: --page-token ${next}, or --all for every page)\n`);
  return EXIT.OK;
}

/**
 * Holders with the paths of their identity and of the groups their bindings are at: the
 * paths the answer carries (`identityPath`, `groupPath`), read by uid (NameBook) only where
 * it carries none (what the caller may not list: a short uid then).
 */
async function named(s: Session, items: Item[]): Promise<Item[]> {
  const names = new NameBook(s);
  return Promise.all(
    items.map(async (i) => ({
      ...i,
      identityPath:
        typeof i.identityPath === 'string'
          ? i.identityPath
          : await names.identityPath(String(i.identityUid)),
      boundAt: (
        await Promise.all(
          proofs(i).map(async (p) => p.groupPath ?? (await names.groupPath(p.groupUid))),
        )
      ).join(','),
    })),
  );
}

interface GroupAccess {
  groupUid: string;
  bindings: { bindingUid: string; role: { uid: string; name: string } }[];
  capabilities: string[];
  effectiveCapabilities: string[];
  /** Conditional bindings, apart: what they grant is not among the capabilities. */
  conditional?: {
    bindingUid: string;
    role: { uid: string; name: string };
    when: ConditionWords;
    capabilities: string[];
  }[];
}

/** The roles bound at a group, the conditional ones marked (`reader (when on call)`). */
const rolesHere = (g: GroupAccess): string =>
  [
    ...g.bindings.map((b) => b.role.name || b.role.uid),
    ...(g.conditional ?? []).map((c) => `${c.role.name || c.role.uid} (${whenText(c.when)})`),
  ].join(',');

const WHAT_COLUMNS: Column[] = [
  { header: 'GROUP', value: (i) => String(i.groupPath), whole: true },
  {
    header: 'ROLES',
    value: (i) => rolesHere(i as unknown as GroupAccess),
    whole: true,
  },
  {
    header: 'HOLDS HERE AND BELOW',
    value: (i) => (i as unknown as GroupAccess).effectiveCapabilities.join(','),
    list: true,
  },
  { header: 'GROUP UID', value: (i) => String(i.groupUid), uid: true },
];
const WHAT_WIDE: Column[] = [
  {
    header: 'BINDINGS',
    value: (i) => {
      const g = i as unknown as GroupAccess;
      return [...g.bindings, ...(g.conditional ?? [])].map((b) => b.bindingUid).join(',');
    },
    uid: true,
  },
];

/**
 * `arbor what-can [--as IDENTITY]`: what an identity (default: you) holds, group by group,
 * with the roles bound there: the API's whatCan, page by page.
 */
export async function whatCan(_args: unknown[], o: Opts): Promise<number> {
  const s = await openSession(o.api as string | undefined);
  if (typeof o.as !== 'string' && isAdminToken(s))
    throw new CliError(
      'the admin token is no identity: it holds every capability everywhere',
      EXIT.USAGE,
      ['  ask about an identity with --as <identity>'],
    );
  const query: Record<string, string> = {};
  if (typeof o.as === 'string') query.identity = await resolveUid(s, 'identities', o.as);
  if (typeof o.pageSize === 'string') query.page_size = o.pageSize;
  if (typeof o.pageToken === 'string') query.page_token = o.pageToken;
  if (o.all === true && query.page_size === undefined) query.page_size = '200';
  const { items, next, coverage, extras } = await accessList(
    s,
    { path: '/iam/v2beta1/access:whatCan', plural: 'groups' },
    query,
    o.all === true,
  );
  const format = (o.output ?? 'table') as OutputFormat;
  if (items.length === 0 && (format === 'table' || format === 'wide'))
    process.stderr.write('No role binding you can see grants it anything.\n');
  const names = new NameBook(s);
  const shown =
    format === 'name'
      ? items.map((i) => ({ uid: i.groupUid }))
      : format === 'table' || format === 'wide'
        ? await Promise.all(
            // The answer's `groupPath`; read by uid only where it carries none.
            items.map(async (i) => ({
              ...i,
              groupPath:
                typeof i.groupPath === 'string'
                  ? i.groupPath
                  : await names.groupPath(String(i.groupUid)),
            })),
          )
        : items;
  process.stdout.write(
    printerFor(format)({ items: shown, single: false, columns: WHAT_COLUMNS, wide: WHAT_WIDE }),
  );
  if (coverage.partial === true || items.some((i) => i.partial === true))
    process.stderr.write(
      '(partial: groups and holdings from bindings you may not list are not shown)\n',
    );
  process.stderr.write(await actingForNote(names, extras.actingFor));
  if (next) process.stderr.write(`(more: --page-token ${next}, or --all for every page)\n`);
  return EXIT.OK;
}

interface TestResult {
  identityUid?: string;
  identityName: string;
  wouldAssume: boolean;
  clauses: { clause: string; passed: boolean; reason: string }[];
}

async function readInput(path: string): Promise<string> {
  if (path === '-') {
    let text = '';
    process.stdin.setEncoding('utf8');
    for await (const chunk of process.stdin) text += chunk as string;
    return text;
  }
  return readFile(path, 'utf8').catch((e: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read ${path}: ${e.code ?? e.message}`, EXIT.USAGE);
  });
}

const CLAUSE_COLUMNS: Column[] = [
  { header: 'CLAUSE', value: (i) => String(i.clause) },
  { header: 'PASSED', value: (i) => (i.passed === true ? 'yes' : 'no') },
  { header: 'REASON', value: (i) => String(i.reason) },
];

/**
 * `arbor identities test-token [IDENTITY] --token-file F | --claims-file F`: the claim
 * tester's verdict, clause by clause. Exit 0 when (any) identity would be assumed, else 1.
 */
export async function testToken(args: unknown[], o: Opts): Promise<number> {
  const tokenFile = o.tokenFile as string | undefined;
  const claimsFile = o.claimsFile as string | undefined;
  if ((tokenFile === undefined) === (claimsFile === undefined))
    throw new CliError('give exactly one of --token-file or --claims-file', EXIT.USAGE);
  const body: Record<string, unknown> = {};
  if (tokenFile !== undefined) body.token = (await readInput(tokenFile)).trim();
  else {
    let claims: unknown;
    try {
      claims = parseYaml(await readInput(claimsFile!)); // YAML is a superset of JSON
    } catch (e) {
      throw new CliError(`${claimsFile} is not JSON or YAML: ${(e as Error).message}`, EXIT.USAGE);
    }
    if (typeof claims !== 'object' || claims === null || Array.isArray(claims))
      throw new CliError(`${claimsFile} must hold one object of claims`, EXIT.USAGE);
    body.claims = claims;
  }
  const s = await openSession(o.api as string | undefined);
  const identity = args[0] as string | undefined;
  if (identity !== undefined) body.identityUid = await resolveUid(s, 'identities', identity);
  if (typeof o.pageSize === 'string') body.pageSize = Number(o.pageSize);
  if (typeof o.pageToken === 'string') body.pageToken = o.pageToken;
  const answer = await call<{ results: TestResult[]; nextPageToken?: string }>(
    s,
    'POST',
    '/iam/v2beta1/access:testToken',
    { body },
  );
  const code = answer.results.some((r) => r.wouldAssume) ? EXIT.OK : EXIT_NO;
  if (o.output === 'json') process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
  else if (o.output === 'yaml') process.stdout.write(stringify(answer));
  else {
    if (answer.results.length === 0)
      process.stderr.write('No claim-match identity you can see to test.\n');
    // Reasons are what one reads here: never cut to the terminal's width.
    const table = printerFor('wide');
    process.stdout.write(
      answer.results
        .map(
          (r) =>
            `${r.identityName || '(claim match)'} ${r.identityUid ?? ''}: ${
              r.wouldAssume ? 'would assume' : 'would NOT assume'
            }\n${table({ items: r.clauses, single: false, columns: CLAUSE_COLUMNS, wide: [] })}`,
        )
        .join('\n'),
    );
  }
  if (answer.nextPageToken)
    process.stderr.write(`(more identities: --page-token ${answer.nextPageToken})\n`);
  return code;
}
