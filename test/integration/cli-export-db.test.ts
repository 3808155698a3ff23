import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { parseAllDocuments } from 'yaml';
import { openDatabase } from '../../src/db/connect.js';
import { runArbor } from '../helpers/cli-run.js';
import { TEST_BACKEND } from '../helpers/db.js';
import { createGroup } from '../helpers/fixtures.js';
import { createIdentity } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * `arbor export --group <path>` straight on the database (no API: no ARBOR_API_URL, and no
 * server owns the data directory), as an operator runs it beside the database: the group by
 * its path of names, the tree below it, a scheduled and expiring binding with its window (so
 * the reconciler adopts it as it is), and an unknown path refused with exit 1 (NOT_FOUND). On PGlite the
 * database is a data directory the test server used and released; on PostgreSQL, its URL.
 */
let s: TestServer | undefined;
let home: string;
let dataDir: string;
let dbUrl = '';
let platform: string;
let binding: string;
const start = new Date(Date.now() + 86_400_000).toISOString();
const end = new Date(Date.now() + 2 * 86_400_000).toISOString();

test.before(async () => {
  home = mkdtempSync(join(tmpdir(), 'arbor-export-db-'));
  dataDir = join(home, 'data');
  const database = TEST_BACKEND === 'pglite' ? await openDatabase({ dataDir }) : undefined;
  s = await startServer({}, database ? { database } : {});
  dbUrl = TEST_BACKEND === 'postgres' ? (s.db.url ?? '') : '';
  const acme = await createGroup(s.admin, 'acme');
  platform = await createGroup(s.admin, 'platform', acme);
  const ci = await createIdentity(s.admin, platform, 'ci');
  const viewer = (await s.admin.get('/iam/v2beta1/roles?name=viewer')).body.roles[0].uid;
  const made = await s.admin.post(`/iam/v2beta1/roleBindings/${platform}`, {
    identityUid: ci,
    roleUid: viewer,
    notBefore: start,
    expireTime: end,
  });
  if (made.status !== 200) throw new Error(JSON.stringify(made.body));
  binding = made.body.uid;
  // PGlite is one process: the server lets go of the directory before the CLI opens it.
  if (TEST_BACKEND === 'pglite') {
    await s.close();
    s = undefined;
  }
});
test.after.always(async () => {
  await s?.close();
  rmSync(home, { recursive: true, force: true });
});

const exportCli = (group: string) =>
  runArbor(['export', '--group', group], {
    HOME: home,
    DATA_DIR: dataDir,
    DATABASE_URL: dbUrl,
    LOG_LEVEL: 'error',
  });

test.serial(
  'export --group <path> on the database: the tree, and a binding with its window',
  async (t) => {
    const r = await exportCli('acme/platform');
    t.is(r.code, 0, r.stderr);
    t.notRegex(r.stderr, /going through its API/);
    const docs = parseAllDocuments(r.stdout).map((d) => d.toJSON() as Record<string, any>);
    t.deepEqual(
      docs.map((d) => d.kind),
      ['Group', 'Identity', 'RoleBinding'],
    );
    t.is(docs[0]!.spec.adoptUid, platform);
    const rb = docs[2]!;
    t.like(rb.spec, {
      adoptUid: binding,
      notBefore: start,
      expireTime: end,
      deletionPolicy: 'Orphan',
    });
    t.deepEqual(rb.spec.identityRef, { name: 'ci' });
  },
);

test.serial('export --group of a path that does not exist: exit 1, NOT_FOUND', async (t) => {
  const r = await exportCli('acme/platfrom');
  t.is(r.code, 1);
  // On the database the names service answers (through the API: "no group named", with the
  // nearest names); no stack, no SQL.
  t.is(r.stderr, 'arbor: export: Not found: iam.arbor.dev/Group acme/platfrom\n');
  t.is(r.stdout, '');
});
