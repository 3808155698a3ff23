import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/connect.js';
import {
  DataDirBusyError,
  LOCK_FILE,
  dataDirOwner,
  lockDataDir,
  type DataDirOwner,
} from '../../src/db/data-dir-lock.js';

const scratch = () => mkdtempSync(join(tmpdir(), 'arbor-lock-'));

/** The pid of a process that has exited (and been reaped): nobody has it right now. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '0']);
  return r.pid!;
}

function writeLock(dir: string, o: Partial<DataDirOwner>): void {
  const owner: DataDirOwner = {
    pid: deadPid(),
    role: 'server',
    hostname: hostname(),
    nonce: 'stale',
    startedAt: new Date(0).toISOString(),
    ...o,
  };
  writeFileSync(join(dir, LOCK_FILE), JSON.stringify(owner));
}

test('lock: a second holder is refused with the owner’s pid and what to do', (t) => {
  const dir = scratch();
  const held = lockDataDir(dir, { role: 'server' });
  held.setApiUrl('http://127.0.0.1:1234');
  const e = t.throws(() => lockDataDir(dir, { role: 'import-advisories' }), {
    instanceOf: DataDirBusyError,
  });
  t.is(
    e.message,
    `the server (pid ${process.pid}) has the data directory ${dir}; ` +
      'use --api http://127.0.0.1:1234 (or ARBOR_API_URL) or stop it',
  );
  t.is(dataDirOwner(dir)?.apiUrl, 'http://127.0.0.1:1234');
  held.release();
  t.false(existsSync(join(dir, LOCK_FILE)));
  lockDataDir(dir, { role: 'migrate' }).release();
});

test('lock: a lock left by a killed process is taken over', (t) => {
  const dir = scratch();
  writeLock(dir, {});
  t.is(dataDirOwner(dir), undefined);
  const l = lockDataDir(dir, { role: 'server' });
  t.is(dataDirOwner(dir)?.nonce, l.owner.nonce);
  l.release();
});

test('lock: a live pid that started later than the lock says (reused) is stale', (t) => {
  const dir = scratch();
  // Our own pid is alive, but the recorded start time is not ours: another process had it.
  writeLock(dir, { pid: process.pid, procStart: '1' });
  t.plan(existsSync('/proc/self/stat') ? 1 : 0);
  if (!existsSync('/proc/self/stat')) return;
  const l = lockDataDir(dir, { role: 'server' });
  t.is(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).nonce, l.owner.nonce);
  l.release();
});

test('lock: releasing never removes a lock another holder wrote', (t) => {
  const dir = scratch();
  const l = lockDataDir(dir, { role: 'server' });
  writeLock(dir, { pid: process.pid, nonce: 'someone-else' });
  l.release();
  t.true(existsSync(join(dir, LOCK_FILE)));
});

test('lock: of starters racing for one stale lock, exactly one wins', async (t) => {
  const dir = scratch();
  writeLock(dir, {});
  const script = `
    import { lockDataDir } from './src/db/data-dir-lock.ts';
    try { lockDataDir(process.argv[1], { role: 'racer' }); console.log('won');
      setTimeout(() => {}, 3000); // hold until every racer has tried
    } catch (e) { console.log(e.name); }`;
  const racers = Array.from(
    { length: 6 },
    () =>
      new Promise<string>((resolve) => {
        const c = spawn(process.execPath, [
          '--import=tsx',
          '--input-type=module',
          '-e',
          script,
          dir,
        ]);
        let out = '';
        c.stdout.on('data', (d: Buffer) => (out += d.toString()));
        c.stderr.on('data', (d: Buffer) => (out += d.toString()));
        // 'close', not 'exit': a racer that prints and exits at once may exit before its
        // output has been read, and then 'exit' resolved with nothing (seen once in CI).
        c.on('close', () => resolve(out.trim()));
      }),
  );
  const results = await Promise.all(racers);
  t.is(results.filter((r) => r === 'won').length, 1, results.join(' | '));
  t.is(results.filter((r) => r === 'DataDirBusyError').length, 5, results.join(' | '));
});

test('openDatabase: a second opener of an embedded data directory is refused and closing twice is fine', async (t) => {
  const dir = scratch();
  const db = await openDatabase({ dataDir: dir, role: 'server' });
  await t.throwsAsync(openDatabase({ dataDir: dir, role: 'import-advisories' }), {
    instanceOf: DataDirBusyError,
    message: new RegExp(`the server \\(pid ${process.pid}\\) has the data directory`),
  });
  await db.knex.raw('select 1');
  await db.close();
  await db.close();
  t.false(existsSync(join(dir, LOCK_FILE)));
  const again = await openDatabase({ dataDir: dir });
  await again.close();
});

test('lock: a new data directory is 0700 and its lock file 0600, whatever the umask', (t) => {
  const dir = join(scratch(), 'fresh', 'data');
  const old = process.umask(0o002);
  try {
    const held = lockDataDir(dir, { role: 'server' });
    held.setApiUrl('http://127.0.0.1:1234');
    t.is(statSync(dir).mode & 0o777, 0o700);
    t.is(statSync(join(dir, LOCK_FILE)).mode & 0o777, 0o600);
    held.release();
  } finally {
    process.umask(old);
  }
});
