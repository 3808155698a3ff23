import {
  chmodSync,
  cpSync,
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
import { generateSecretKey } from '../../src/auth/secret-keys.js';
import { generateSigningKey } from '../../src/auth/signing-keys.js';
import { readArchive } from '../../src/cli/backup-archive.js';
import { openDatabase } from '../../src/db/connect.js';
import { runArbor } from '../helpers/cli-run.js';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';

/**
 * Backups and keys: `arbor backup` through a server's API (ARBOR_API_URL, as the README
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

/** The built-in viewer role's uid, as the roles list names it. */
const VIEWER_NAME = 'viewer';
let VIEWER = '';
let orgUid: string | undefined;
async function org(): Promise<string> {
  if (orgUid !== undefined) return orgUid;
  const made = await server.admin.post('/iam/v2beta1/groups', { name: 'backup-org' });
  orgUid = made.body.uid as string;
  const roles = await server.admin.get('/iam/v2beta1/roles?page_size=200');
  VIEWER = (roles.body.roles as { uid: string; name: string }[]).find(
    (r) => r.name === VIEWER_NAME,
  )!.uid;
  return orgUid;
}

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

test.serial(
  'sealed secrets whose secret key is not on this machine: the backup refuses',
  async (t) => {
    // The server seals an IdP's client secret with its secret key; this machine holds the
    // server's signing keys but another secret key.
    const idp = await server.admin.post(`/iam/v2beta1/identityProviders/${await org()}`, {
      name: 'sealed-idp',
      defaultRole: VIEWER,
      oidc: { issuer: 'https://accounts.example.com', clientId: 'c', clientSecret: 'shh' },
    });
    t.is(idp.status, 200, JSON.stringify(idp.body));
    const other = scratch();
    cpSync(server.arbor.config.signingKeysDir, join(other, 'keys'), { recursive: true });
    await generateSecretKey(join(other, 'secret-keys'));
    const file = join(scratch(), 'arbor.backup');
    const r = await backup([file], other);
    t.is(r.code, 1, r.stdout);
    t.regex(
      r.stderr,
      /^arbor: backup: the server's sealed secrets need secret keys this machine does not hold \(key ids [0-9a-f]{16}\): restored, they would not open/m,
    );
    t.false(existsSync(file));
    // With the server's own secret keys as well, the same backup holds them and succeeds.
    cpSync(server.arbor.config.secretKeysDir, join(other, 'secret-keys'), { recursive: true });
    const ok = await backup([file], other);
    t.is(ok.code, 0, ok.stderr);
  },
);

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
