import { call, openSession, type Session } from './api-session.js';
import { CliError, EXIT } from './cli-errors.js';
import { NameBook } from './name-book.js';
import { renderTable, tableWidth } from './printers/table-printer.js';
import type { Column, Item } from './resource-kinds.js';

const PATH = '/iam/v2beta1/tokens';
/** Pages read at most (of 200 tokens): a table of more is no use to a person. */
const MAX_PAGES = 10;
/** The jti shown in the table, and the shortest prefix `revoke` takes. */
const SHORT = 8;

interface ApiToken {
  jti: string;
  identity: string;
  parentJti?: string;
  actor?: string;
  scope?: string[];
  groups?: string[];
  issueTime: string;
  expireTime: string;
}

interface Page {
  tokens: ApiToken[];
  nextPageToken?: string;
  totalCount: string;
}

/** Every live token the caller lists (at most MAX_PAGES pages), and how many there are. */
async function listAll(s: Session): Promise<{ tokens: ApiToken[]; total: number }> {
  const tokens: ApiToken[] = [];
  let pageToken: string | undefined;
  let total = 0;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await call<Page>(s, 'GET', PATH, {
      params: { query: { page_size: 200, ...(pageToken ? { page_token: pageToken } : {}) } },
    });
    tokens.push(...page.tokens);
    total = Number(page.totalCount);
    pageToken = page.nextPageToken;
    if (!pageToken) break;
  }
  return { tokens, total };
}

const when = (iso: string) => iso.replace(/\.\d+Z$/, 'Z');

/**
 * `arbor auth sessions [-o json]`: the caller's live API tokens and those exchanged from
 * them (docs/oauth.md, "Sessions"), as a table: short jti, identity path, scope, groups,
 * issued, expires, actor. The admin (ARBOR_ADMIN_TOKEN) sees every identity's.
 */
export async function authSessionsCommand(o: { api?: string; output?: string }): Promise<number> {
  const s = await openSession(o.api);
  const { tokens, total } = await listAll(s);
  if (o.output === 'json') {
    process.stdout.write(`${JSON.stringify({ tokens, totalCount: String(total) }, null, 2)}\n`);
    return EXIT.OK;
  }
  const names = new NameBook(s);
  const items: Item[] = await Promise.all(
    tokens.map(async (t) => ({
      jti: t.jti.slice(0, SHORT),
      identity: await names.identityPath(t.identity),
      parent: t.parentJti?.slice(0, SHORT) ?? '',
      scope: (t.scope ?? []).join(','),
      groups: (await Promise.all((t.groups ?? []).map((g) => names.groupPath(g)))).join(','),
      issued: when(t.issueTime),
      expires: when(t.expireTime),
      actor: t.actor ? await names.identityPath(t.actor) : '',
    })),
  );
  const col = (header: string, key: string, extra: Partial<Column> = {}): Column => ({
    header,
    value: (i) => {
      const v = i[key];
      return typeof v === 'string' ? v : '';
    },
    ...extra,
  });
  const columns = [
    col('JTI', 'jti', { whole: true }),
    col('IDENTITY', 'identity', { whole: true }),
    col('FROM', 'parent'),
    col('SCOPE', 'scope', { list: true }),
    col('GROUPS', 'groups', { list: true }),
    col('ISSUED', 'issued'),
    col('EXPIRES', 'expires'),
    col('ACTOR', 'actor'),
  ];
  if (items.length === 0) process.stdout.write('no live API tokens\n');
  else process.stdout.write(renderTable(items, columns, tableWidth()));
  if (total > tokens.length) process.stdout.write(`… and ${total - tokens.length} more\n`);
  return EXIT.OK;
}

/**
 * `arbor auth sessions revoke <id>`: revoke one listed token, by its jti or a prefix of it
 * (at least eight characters, naming one token), and every token exchanged from it.
 * @throws CliError exit 4 when no listed token has that id, 3 when the prefix is ambiguous.
 */
export async function authSessionsRevokeCommand(id: string, o: { api?: string }): Promise<number> {
  const s = await openSession(o.api);
  let jti = id;
  if (id.length < 36) {
    if (id.length < SHORT)
      throw new CliError(`a token id is at least ${SHORT} characters`, EXIT.INVALID);
    const matches = (await listAll(s)).tokens.filter((t) => t.jti.startsWith(id));
    if (matches.length === 0) throw new CliError(`no live token ${id} of yours`, EXIT.NOT_FOUND);
    if (matches.length > 1)
      throw new CliError(
        `${id} names ${matches.length} tokens: give more of the jti`,
        EXIT.INVALID,
      );
    jti = matches[0]!.jti;
  }
  const t = await call<ApiToken>(s, 'POST', `${PATH}:revoke`, { body: { jti } });
  process.stdout.write(`revoked ${t.jti} and every token exchanged from it\n`);
  return EXIT.OK;
}
