import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { runArbor, type CliRun } from '../helpers/cli-run.js';
import { startArborProcess, type ArborProcess } from '../helpers/process.js';

/**
 * A binding's window as a person sets and reads it, with the real CLI against a real
 * server: `--from 2h --for 8h` is eight hours from two hours on (as `arbor request --for`
 * is a length), the list says "starts in 2h, for 8h", and `can-i --explain` says a binding
 * that has not started will grant, and when, instead of "no binding grants it".
 */

const ADMIN = 'cli-windows-admin-token-0123456789';
const H = 3_600_000;
let server: ArborProcess;
let home: string;

function arbor(args: string[]): Promise<CliRun> {
  return runArbor(args, { HOME: home, ARBOR_API_URL: server.url, ARBOR_ADMIN_TOKEN: ADMIN });
}

async function ok(args: string[]): Promise<string> {
  const r = await arbor(args);
  if (r.code !== 0) throw new Error(`arbor ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

interface Binding {
  uid: string;
  notBefore?: string;
  expireTime?: string;
  pending?: boolean;
}
/** `arbor role-bindings create` of editor to acme/ops at acme, with `flags` for its window. */
const create = (...flags: string[]): string[] =>
  [
    'role-bindings',
    'create',
    '--parent',
    'acme',
    '--identity',
    'acme/ops',
    '--role',
    'editor',
  ].concat(flags);
const bind = async (...flags: string[]): Promise<Binding> =>
  JSON.parse(await ok(create(...flags, '-o', 'json'))) as Binding;

/** `arbor can-i groups.list` at acme as acme/ops, with `flags` for its answer. */
const canI = (...flags: string[]): Promise<CliRun> =>
  arbor(['can-i', 'groups.list', '--group', 'acme', '--as', 'acme/ops', ...flags]);

/** The line of `arbor role-bindings list` that shows binding `uid` with its window in words. */
const listed = (window: string, uid: string): RegExp =>
  new RegExp(`^ops\\s+editor\\s+acme\\s+${window}\\s+${uid}$`, 'm');

test.before(async () => {
  home = mkdtempSync(join(tmpdir(), 'arbor-cli-windows-'));
  server = await startArborProcess({
    DATA_DIR: join(home, 'data'),
    DATABASE_URL: '',
    ARBOR_ADMIN_TOKEN: ADMIN,
  });
  await ok(['groups', 'create', '--name', 'acme']);
  await ok([
    'identities',
    'create',
    '--parent',
    'acme',
    '--name',
    'ops',
    '--issuer',
    'https://issuer.example.com',
    '--subject',
    'ops',
  ]);
});

test.after.always(() => {
  server?.kill();
  rmSync(home, { recursive: true, force: true });
});

test.serial('--for is a length from --from: eight hours, from two hours on', async (t) => {
  const before = Date.now();
  const b = await bind('--from', '2h', '--for', '8h');
  const start = Date.parse(b.notBefore!);
  t.true(start >= before + 2 * H && start <= Date.now() + 2 * H, b.notBefore);
  t.is(Date.parse(b.expireTime!) - start, 8 * H, 'the window is eight hours, not six');
  t.true(b.pending);

  // The list says where the window stands, in words; -o wide gives the instants.
  const list = await ok(['role-bindings', 'list', '--parent', 'acme']);
  t.regex(list, /^IDENTITY\s+ROLE\s+GROUP\s+WINDOW\s+UID$/m);
  t.regex(list, listed('starts in 2h, for 8h', b.uid));
  const wide = await ok(['role-bindings', 'list', '--parent', 'acme', '-o', 'wide']);
  t.regex(wide, /STARTS \(UTC\)\s+EXPIRES \(UTC\)/);
  t.true(wide.includes(b.notBefore!.replace('T', ' ').slice(0, 16)), wide);

  // On update, --for counts from the scheduled start still to come (and may only shorten).
  const updated = JSON.parse(
    await ok(['role-bindings', 'update', b.uid, '--for', '1h', '-o', 'json']),
  ) as Binding;
  t.is(Date.parse(updated.expireTime!) - start, H);
  t.regex(
    await ok(['role-bindings', 'list', '--parent', 'acme']),
    new RegExp(`starts in 2h, for 60m\\s+${b.uid}$`, 'm'),
  );
  await ok(['role-bindings', 'delete', b.uid]);
});

test.serial('--for alone counts from now; --expire-time is the instant instead', async (t) => {
  const before = Date.now();
  const b = await bind('--for', '3d');
  const ttl = Date.parse(b.expireTime!) - before;
  t.true(ttl >= 72 * H && ttl <= 72 * H + 60_000, b.expireTime);
  t.is(b.notBefore, undefined);
  t.regex(await ok(['role-bindings', 'list', '--parent', 'acme']), listed('expires in 3d', b.uid));
  await ok(['role-bindings', 'delete', b.uid]);

  const both = await arbor(create('--for', '8h', '--expire-time', '2099-01-01T00:00:00Z'));
  t.is(both.code, 2, both.stderr);
  t.regex(both.stderr, /--for and --expire-time say the same thing: give one/);

  const help = await ok(['role-bindings', 'create', '--help']);
  t.regex(
    help.replace(/\s+/g, ' '),
    /--for <duration> how long the binding grants, from its start/,
  );
});

test.serial('can-i --explain on a binding that has not started says when it starts', async (t) => {
  const b = await bind('--from', '2h', '--for', '8h');
  const r = await canI('--explain');
  t.is(r.code, 1, r.stderr);
  t.is(
    r.stdout,
    'no\n' +
      'not yet: a binding that grants it has not started:\n' +
      `  role editor bound at acme (binding ${b.uid})\n` +
      `    starts in 2h, for 8h (${b.notBefore})\n`,
  );
  const json = JSON.parse((await canI('-o', 'json')).stdout) as {
    allowed: boolean;
    pending: Record<string, unknown>[];
  };
  t.false(json.allowed);
  t.is(json.pending.length, 1);
  t.like(json.pending[0], { bindingUid: b.uid, notBefore: b.notBefore, expireTime: b.expireTime });

  // Nothing scheduled either: the plain answer.
  await ok(['role-bindings', 'delete', b.uid]);
  const none = await canI('--explain');
  t.is(none.stdout, 'no\nno binding you can see grants it there or above\n');
});
