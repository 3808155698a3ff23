import { readFile } from 'node:fs/promises';
import { parse as parseYaml, stringify } from 'yaml';
import { call, openSession } from './api-session.js';
import { CliError, EXIT } from './cli-errors.js';
import { resolveUid } from './name-resolver.js';
import { listItems } from './resource-actions.js';
import { printerFor, type OutputFormat } from './printers/printer.js';
import type { Column, Item } from './resource-kinds.js';

type Opts = Record<string, unknown>;

/** `can-i` and `test-token` say "no" with this status (as `kubectl auth can-i` does). */
export const EXIT_NO = 1;

interface Proof {
  bindingUid: string;
  role: { uid: string; name: string };
  groupUid: string;
  path: string[];
}

const roleOf = (p: Proof) => p.role.name || p.role.uid;

/** `arbor can-i CAP --group G [--as IDENTITY] [--explain]`: yes (exit 0) or no (exit 1). */
export async function canI(args: unknown[], o: Opts): Promise<number> {
  const s = await openSession(o.api as string | undefined);
  const body = {
    capability: args[0] as string,
    groupUid: await resolveUid(s, 'groups', o.group as string),
    ...(typeof o.as === 'string' ? { identityUid: await resolveUid(s, 'identities', o.as) } : {}),
  };
  const r = await call<{ allowed: boolean; grants: Proof[] }>(
    s,
    'POST',
    '/iam/v2beta1/access:check',
    { body },
  );
  const code = r.allowed ? EXIT.OK : EXIT_NO;
  if (o.output === 'json') process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  else if (o.output === 'yaml') process.stdout.write(stringify(r));
  else {
    process.stdout.write(r.allowed ? 'yes\n' : 'no\n');
    if (o.explain === true && r.allowed) {
      const lines = r.grants.map(
        (g) =>
          `  binding ${g.bindingUid}: role ${roleOf(g)} bound at ${g.groupUid}\n` +
          `    path: ${g.path.join(' > ')}`,
      );
      process.stdout.write(`granted by:\n${lines.join('\n')}\n`);
    }
    if (o.explain === true && !r.allowed)
      process.stdout.write('no binding you can see grants it there or above\n');
  }
  return code;
}

const HOLDER_COLUMNS: Column[] = [
  { header: 'IDENTITY', value: (i) => String(i.identityUid), uid: true },
  { header: 'ROLES', value: (i) => proofs(i).map(roleOf).join(',') },
  {
    header: 'BOUND AT',
    value: (i) =>
      proofs(i)
        .map((p) => p.groupUid)
        .join(','),
    uid: true,
  },
];
const HOLDER_WIDE: Column[] = [
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
  const { items, next } = await listItems(
    s,
    { path: '/iam/v2beta1/access:whoCan', plural: 'identities' },
    query,
    o.all === true,
  );
  const format = (o.output ?? 'table') as OutputFormat;
  if (items.length === 0 && (format === 'table' || format === 'wide'))
    process.stderr.write('No identity you can see holds it there.\n');
  // `-o name`: one identity uid a line.
  const shown = format === 'name' ? items.map((i) => ({ uid: i.identityUid })) : items;
  process.stdout.write(
    printerFor(format)({ items: shown, single: false, columns: HOLDER_COLUMNS, wide: HOLDER_WIDE }),
  );
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
