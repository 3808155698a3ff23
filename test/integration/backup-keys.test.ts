import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { generateSigningKey } from '../../src/auth/signing-keys.js';
import { readArchive } from '../../src/cli/backup-archive.js';
import { openDatabase } from '../../src/db/connect.js';
import { runArbor } from '../helpers/cli-run.js';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';

/**
 * Issue 36, finding 5: `arbor backup` through a server's API (ARBOR_API_URL, as the README
 * walk sets it) either holds the keys, read from this machine when they are that server's,
 * or fails, unless --without-keys says otherwise; and the file it writes is 0600 whatever
 * was at its path. Backups are of the embedded database, so the server runs on PGlite
 * whichever backend the suite is on.
 */

let server: TestServer;

test.before(async () => {
  server = await startServer({}, { database: await openDatabase({ dataDir: 'memory://' }) });
});
test.after.always(async () => {
  await server?.close();
});

const scratch = () => mkdtempSync(join(tmpdir(), 'arbor-backup-keys-'));

/** `arbor backup <args>` against the test server's API, with DATA_DIR as given. */
function backup(args: string[], dataDir: string) {
  const home = scratch();
  return runArbor(['backup', ...args], {
    ARBOR_API_URL: server.url,
    ARBOR_ADMIN_TOKEN: ADMIN_TOKEN,
    DATA_DIR: dataDir,
    HOME: home,
    XDG_CONFIG_HOME: home,
  });
}

function keyNames(file: string): string[] {
  return readArchive(readFileSync(file))
    .map((f) => f.name)
    .filter((n) => n.startsWith('keys/') || n.startsWith('secret-keys/'));
}

test.serial(
  'with ARBOR_API_URL and the server’s keys on this machine, the backup holds them, 0600',
  async (t) => {
    const file = join(scratch(), 'arbor.backup');
    // An existing, wider file: it must end 0600 (it holds private keys).
    writeFileSync(file, 'old');
    chmodSync(file, 0o644);
    const r = await backup([file], server.arbor.config.dataDir);
    t.is(r.code, 0, r.stderr);
    const keys = keyNames(file);
    t.true(
      keys.some((n) => n.startsWith('keys/')),
      JSON.stringify(keys),
    );
    t.true(
      keys.some((n) => n.startsWith('secret-keys/')),
      JSON.stringify(keys),
    );
    t.regex(r.stdout, new RegExp(`${keys.length} key files`));
    t.is(statSync(file).mode & 0o777, 0o600);
  },
);

test.serial('without the keys here, the backup fails and writes nothing', async (t) => {
  const file = join(scratch(), 'arbor.backup');
  const r = await backup([file], scratch());
  t.is(r.code, 1, r.stdout);
  t.regex(r.stderr, /^arbor: backup: no signing key files in .*: a backup without the keys/m);
  t.regex(r.stderr, /--without-keys/);
  t.false(existsSync(file));
});

test.serial('keys of another server on this machine are not taken for the server’s', async (t) => {
  const other = scratch();
  mkdirSync(join(other, 'keys'));
  await generateSigningKey(join(other, 'keys'));
  const file = join(scratch(), 'arbor.backup');
  const r = await backup([file], other);
  t.is(r.code, 1, r.stdout);
  t.regex(r.stderr, /are not those of the server at http:\/\/127\.0\.0\.1:\d+/);
  t.false(existsSync(file));
});

test.serial('--without-keys writes the database alone, replacing a link at the path', async (t) => {
  const dir = scratch();
  const victim = join(dir, 'victim');
  writeFileSync(victim, 'do not touch');
  const file = join(dir, 'arbor.backup');
  symlinkSync(victim, file);
  const r = await backup([file, '--without-keys'], scratch());
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /0 key files \(--without-keys\)/);
  t.deepEqual(keyNames(file), []);
  t.false(lstatSync(file).isSymbolicLink());
  t.is(readFileSync(victim, 'utf8'), 'do not touch');
});
