import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import test from 'ava';

/**
 * docs/adding-a-resource.md's table of the files a new kind creates or edits is the claim
 * "a kind is one module". For the kinds already built as features, every row must exist,
 * and the kind's service, store, routes and feature must be named nowhere in src/ outside
 * those rows (and the by-need RPC file the guide allows): a kind wired into another list,
 * or a row naming a file no kind has, fails here.
 */

const root = join(import.meta.dirname, '..', '..');
const guide = readFileSync(join(root, 'docs', 'adding-a-resource.md'), 'utf8');

/** The table between the guide's markers: the backticked path of each row. */
function rowsOfGuide(text: string): string[] {
  const start = text.indexOf('<!-- files-of-a-kind -->');
  const end = text.indexOf('<!-- /files-of-a-kind -->');
  if (start < 0 || end < start) return [];
  return text
    .slice(start, end)
    .split('\n')
    .filter((l) => /^\|\s*\d+\s*\|/.test(l))
    .map((l) => /`([^`]+)`/.exec(l)?.[1] ?? '');
}

/** Files the guide allows beside the table, only where a kind needs them. */
const BY_NEED = ['src/grpc/<kind>-rpcs.ts'];

interface Feature {
  kind: string;
  kinds: string;
  kindsSnake: string;
  service: string;
  names: readonly string[];
  /** Rows of the guide a kind made before the guide does not have, each with its reason. */
  lacks: readonly string[];
}

const k = (
  kind: string,
  kinds: string,
  service: string,
  pascal: string,
  lacks: readonly string[] = [],
): Feature => ({
  kind,
  kinds,
  kindsSnake: kinds.replaceAll('-', '_'),
  service,
  names: [
    `${pascal}Service`,
    `Knex${pascal}Store`,
    `mount${pascal}Routes`,
    `${pascal.charAt(0).toLowerCase()}${pascal.slice(1)}Feature`,
  ],
  lacks,
});

const FEATURES: readonly Feature[] = [
  k('account-association', 'account-associations', 'iam', 'AccountAssociation'),
  k('group-invite', 'group-invites', 'iam', 'GroupInvite'),
  k('identity-provider', 'identity-providers', 'iam', 'IdentityProvider'),
  k('access-request', 'access-requests', 'iam', 'AccessRequest'),
  // The gRPC door has no events API, and subscriptions are tested with the events they
  // deliver (test/integration/events.test.ts).
  k('subscription', 'subscriptions', 'events', 'Subscription', [
    'proto/arbor/<service>/v2beta1/<kinds_>.proto',
    'test/integration/<kinds>*.test.ts',
  ]),
];

/** A row's pattern as a regular expression over repository paths, for one kind. */
function patternOf(row: string, f: Feature): RegExp {
  const esc = row.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
  const body = esc
    .replaceAll('<kinds_>', f.kindsSnake)
    .replaceAll('<kinds>', f.kinds)
    .replaceAll('<kind>', f.kind)
    .replaceAll('<service>', '[a-z]+')
    .replaceAll('<name>', '[a-z0-9-]+')
    .replaceAll('NNNN', '\\d{4}')
    .replaceAll('*', '[^/]*');
  // A folder row holds everything under it.
  return new RegExp(`^${body}${row.endsWith('/') ? '.*' : ''}$`);
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    return statSync(join(root, path)).isDirectory() ? filesUnder(path) : [path];
  });
}

const files = [...filesUnder('src'), ...filesUnder('test'), ...filesUnder('proto')];

/** The code of a file without its comments (a comment may name anything). */
function codeOf(path: string): string {
  return readFileSync(join(root, path), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1');
}

const rows = rowsOfGuide(guide);

test('the guide lists at most twelve files for a new kind, each a path', (t) => {
  t.true(rows.length > 0, 'the table between <!-- files-of-a-kind --> markers is found');
  t.true(rows.length <= 12, `${rows.length} rows`);
  for (const r of rows) t.regex(r, /^(src|proto|test)\//, r);
});

for (const f of FEATURES) {
  test(`every row of the guide exists for ${f.kinds}`, (t) => {
    for (const l of f.lacks) t.true(rows.includes(l), `${l} is a row of the guide`);
    for (const r of rows.filter((x) => !f.lacks.includes(x))) {
      const re = patternOf(r, f);
      t.true(
        files.some((x) => re.test(x)),
        `${r} (${re.source}) matches no file`,
      );
    }
  });

  test(`${f.kinds} is named in src/ only by the guide's files`, (t) => {
    const allowed = [...rows, ...BY_NEED].map((r) => patternOf(r, f));
    const src = files.filter((x) => x.startsWith('src/') && x.endsWith('.ts'));
    for (const name of f.names) {
      const word = new RegExp(`\\b${name}\\b`);
      const naming = src.filter((x) => word.test(codeOf(x)));
      t.true(naming.length > 0, `${name} is named somewhere (the test reads the right names)`);
      const outside = naming.filter((x) => !allowed.some((re) => re.test(x)));
      t.deepEqual(outside, [], `${name} is named outside the guide's files`);
    }
  });
}

test('the check fails for a kind wired into a shared list', (t) => {
  // The same check over a file the guide does not list, as a shared wiring list would be.
  const f = FEATURES[0]!;
  const allowed = rows.map((r) => patternOf(r, f));
  t.false(allowed.some((re) => re.test(relative(root, join(root, 'src/service-layer.ts')))));
  t.true(allowed.some((re) => re.test(`src/features/${f.kind}-feature.ts`)));
});
