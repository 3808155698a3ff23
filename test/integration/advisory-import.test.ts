import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { ADMIN, type Principal } from '../../src/auth/principal.js';
import type { RpcError } from '../../src/core/rpc-error.js';
import type { ImportProgress } from '../../src/resources/advisories/advisory-import.js';
import { TEST_BACKEND } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

const GOOD = fileURLToPath(new URL('../fixtures/osv', import.meta.url));
const BAD = fileURLToPath(new URL('../fixtures/osv-bad', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let s: TestServer;
let scratch: string;
test.before(async () => {
  s = await startServer();
  scratch = await mkdtemp(join(tmpdir(), 'arbor-osv-'));
});
test.after.always(async () => {
  await s?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const importer = () => s.arbor.services.vulnerabilities.advisoryImport;
const rows = () =>
  s.db
    .knex('advisories')
    .orderBy('uid')
    .select('uid', 'name', 'imported_at', s.db.knex.raw('xmin::text AS xmin'));
const violations = (e: unknown) =>
  ((e as RpcError).details[1] as { fieldViolations: Array<{ field: string; description: string }> })
    .fieldViolations;

async function tempDir(name: string): Promise<string> {
  const dir = join(scratch, name);
  await cp(GOOD, dir, { recursive: true });
  return dir;
}

async function rewrite(file: string, change: (doc: any) => void): Promise<void> {
  const doc = JSON.parse(await readFile(file, 'utf8'));
  change(doc);
  await writeFile(file, JSON.stringify(doc));
}

// The tests below share one database and build on each other: serial.
test.serial(
  'import: a malformed file fails the run, names the file, and writes nothing',
  async (t) => {
    const e = await t.throwsAsync(importer().import(ADMIN, BAD));
    t.is((e as RpcError).code, 3);
    const v = violations(e);
    t.true(
      v.every((x) => x.field.endsWith('GHSA-5m2c-q8rt-9hvw.json')),
      JSON.stringify(v),
    );
    t.deepEqual(
      v.map((x) => x.description),
      [
        'GHSA-5m2c-q8rt-9hvw modified: is required',
        'GHSA-5m2c-q8rt-9hvw severity[0].score: must be a CVSS v3 vector',
        'GHSA-5m2c-q8rt-9hvw affected[0].ranges[0].events: must contain an "introduced"',
      ],
    );
    // The valid record next to it was not imported either.
    t.deepEqual(await rows(), []);
  },
);

test.serial('import: the fixture imports with counts and progress', async (t) => {
  const progress: ImportProgress[] = [];
  const r = await importer().import(ADMIN, GOOD, { onProgress: (p) => progress.push(p) });
  t.deepEqual(r, {
    files: 4,
    records: 5,
    created: 5,
    updated: 0,
    unchanged: 0,
    stale: 0,
    duplicates: 0,
  });
  t.is((await rows()).length, 5);
  t.deepEqual(
    progress.filter((p) => p.filesDone === p.files).map((p) => p.phase),
    ['validate', 'write'],
  );
  t.is(progress.length, 8);
});

test.serial('import: a second run of the same files writes nothing', async (t) => {
  const before = await rows();
  const r = await importer().import(ADMIN, GOOD);
  t.like(r, { created: 0, updated: 0, unchanged: 5, stale: 0 });
  t.deepEqual(await rows(), before, 'no row version and no import time changed');
});

test.serial('import: a newer modified updates; an older copy never overwrites', async (t) => {
  const dir = await tempDir('newer');
  const file = join(dir, 'GHSA-7f3q-2m8v-x9c4.json');
  await rewrite(file, (d) => {
    d.modified = '2024-06-01T00:00:00Z';
    d.summary = 'Prototype pollution in tiny-yaml-merge (revised)';
    d.aliases.push('CVE-2024-99999');
  });
  t.like(await importer().import(ADMIN, dir), { created: 0, updated: 1, unchanged: 4 });
  const uid = (await s.db.knex('advisories').where({ name: 'GHSA-7f3q-2m8v-x9c4' }).first('uid'))
    .uid;
  const got = await s.admin.get(`/vulnerabilities/v2beta1/advisories/${uid}`);
  t.is(got.body.summary, 'Prototype pollution in tiny-yaml-merge (revised)');
  t.is(got.body.updateTime, '2024-06-01T00:00:00.000Z');
  const alias = await s.admin.get('/vulnerabilities/v2beta1/advisories?id=CVE-2024-99999');
  t.is(alias.body.totalCount, '1');

  t.like(await importer().import(ADMIN, GOOD), { updated: 0, unchanged: 4, stale: 1 });
  t.is(
    (await s.admin.get(`/vulnerabilities/v2beta1/advisories/${uid}`)).body.summary,
    got.body.summary,
  );
});

test.serial('import: one file; the same id twice in a run keeps the newest', async (t) => {
  const dir = await tempDir('dupes');
  const file = join(dir, 'GHSA-qr4h-9c2w-m5jx.json');
  const doc = JSON.parse(await readFile(file, 'utf8'));
  const newer = { ...doc, modified: '2025-03-01T00:00:00Z', summary: 'newest copy' };
  await writeFile(join(dir, 'copies.json'), JSON.stringify([newer, doc]));
  const single = await importer().import(ADMIN, file);
  t.like(single, { files: 1, records: 1, unchanged: 1 });
  const r = await importer().import(ADMIN, dir);
  t.like(r, { files: 5, records: 7, duplicates: 2, updated: 1 });
  const stored = await s.db
    .knex('advisories')
    .where({ name: 'GHSA-qr4h-9c2w-m5jx' })
    .first('summary');
  t.is(stored.summary, 'newest copy');
});

test.serial('import: unreadable input is INVALID_ARGUMENT and writes nothing', async (t) => {
  const before = await rows();
  const dir = await tempDir('broken');
  await writeFile(join(dir, 'zz-truncated.json'), '{"id": "GHSA-aaaa-bbbb-cccc", ');
  await writeFile(join(dir, 'zz-scalars.json'), '[1, {"id": "nope", "modified": "yesterday"}]');
  await rewrite(join(dir, 'GHSA-7f3q-2m8v-x9c4.json'), (d) => {
    d.modified = '2030-01-01T00:00:00Z';
  });
  const e = await t.throwsAsync(importer().import(ADMIN, dir));
  const v = violations(e).map((x) => `${x.field.slice(dir.length + 1)}: ${x.description}`);
  t.is(v.length, 4, v.join('\n'));
  t.regex(v[0]!, /^zz-scalars\.json: \[0\]: must be an OSV object/);
  t.regex(v[1]!, /^zz-scalars\.json: \[1\] nope id: must match/);
  t.regex(
    v[2]!,
    /^zz-scalars\.json: \[1\] nope modified: must be an RFC 3339 time between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59\.999999999Z$/,
  );
  t.regex(v[3]!, /^zz-truncated\.json: not valid JSON/);
  t.deepEqual(await rows(), before);
  const missing = await t.throwsAsync(importer().import(ADMIN, join(scratch, 'nowhere')));
  t.deepEqual(
    violations(missing).map((x) => x.field),
    ['path'],
  );
});

test.serial('import: only a superuser may import', async (t) => {
  const someone: Principal = { kind: 'identity', uid: 'b'.repeat(40) };
  await t.throwsAsync(importer().import(someone, GOOD), {
    message: 'Permission denied: only an administrator can import advisories',
  });
});

function runCli(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', ...args],
      { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env } },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test.serial('cli: arbor import-advisories prints counts, and fails on a bad file', async (t) => {
  // DATA_DIR always points into the scratch directory (keys, and PGlite's files).
  const env: Record<string, string> = {
    DATA_DIR: join(scratch, 'cli-data'),
    DATABASE_URL: TEST_BACKEND === 'postgres' && s.db.url ? s.db.url : '',
  };
  const ok = await runCli(['import-advisories', GOOD], env);
  t.is(ok.code, 0, ok.stderr);
  t.regex(ok.stdout, /^imported 5 records from 4 files: \d+ created, \d+ updated, \d+ unchanged/);
  t.regex(ok.stderr, /import-advisories: write: 4\/4 files/);
  const bad = await runCli(['import-advisories', BAD], env);
  t.is(bad.code, 1, bad.stderr);
  t.regex(bad.stderr, /nothing imported/);
  t.regex(bad.stderr, /GHSA-5m2c-q8rt-9hvw\.json: GHSA-5m2c-q8rt-9hvw modified: is required/);
  const usage = await runCli(['import-advisories'], env);
  t.is(usage.code, 2);
  t.regex(usage.stderr, /^usage: arbor import-advisories/);
});
