import {
  chmodSync,
  chownSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { AdminTargetError, adminTarget } from '../../src/cli/admin-target.js';
import { LOCK_FILE, type DataDirOwner } from '../../src/db/data-dir-lock.js';
import { runArbor } from '../helpers/cli-run.js';

/**
 * With no --api and no ARBOR_API_URL, an admin command beside an
 * embedded data directory follows its lock file to the server it names, with the admin
 * token. A planted lock must not choose where that token goes. Only loopback traffic: a
 * lock naming another address is refused before anything is sent (checked in-process, so
 * not even the old code would connect), and the listening "server" is on 127.0.0.2.
 */

const TOKEN = 'lock-follow-admin-token-0123456789';
const hasProc = (() => {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
})();
const linux = hasProc && process.getuid !== undefined ? test.serial : test.serial.skip;

/** This test process's start time (field 22 of /proc/self/stat): a live pid that matches. */
function ownStart(): string {
  const stat = readFileSync(`/proc/${process.pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

/** What a server's lock says, naming this (live) process; `o` overrides. */
function lockOf(apiUrl: string, o: Partial<DataDirOwner> = {}): DataDirOwner {
  return {
    pid: process.pid,
    role: 'server',
    apiUrl,
    hostname: hostname(),
    procStart: ownStart(),
    nonce: 'planted',
    startedAt: new Date().toISOString(),
    ...o,
  };
}

/** A data directory whose lock file holds `owner`, 0600 unless told. */
function planted(owner: DataDirOwner, mode = 0o600): string {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-lockfollow-'));
  writeFileSync(join(dir, LOCK_FILE), JSON.stringify(owner), { mode });
  chmodSync(join(dir, LOCK_FILE), mode);
  return dir;
}

/** A stand-in server on 127.0.0.2 that records every authorization header it is sent. */
let recorder: http.Server;
let recorderUrl: string;
const received: string[] = [];

test.before(async () => {
  recorder = http.createServer((req, res) => {
    received.push(req.headers.authorization ?? '(none)');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'pglite', applied: [], pending: [] }));
  });
  await new Promise<void>((r) => recorder.listen(0, '127.0.0.2', () => r()));
  recorderUrl = `http://127.0.0.2:${(recorder.address() as AddressInfo).port}`;
});
test.after.always(() => recorder?.close());

/** `arbor status` beside `dir` with the admin token and no --api: what it printed. */
function statusBeside(dir: string) {
  const home = mkdtempSync(join(tmpdir(), 'arbor-lockfollow-home-'));
  return runArbor(['status'], {
    DATA_DIR: dir,
    ARBOR_ADMIN_TOKEN: TOKEN,
    HOME: home,
    XDG_CONFIG_HOME: home,
  });
}

/** adminTarget in this process, as a command beside `dir` with no --api would call it. */
async function targetBeside(dir: string): Promise<unknown> {
  const saved = { ...process.env };
  try {
    delete process.env.ARBOR_API_URL;
    delete process.env.DATABASE_URL;
    process.env.DATA_DIR = dir;
    process.env.ARBOR_ADMIN_TOKEN = TOKEN;
    const home = mkdtempSync(join(tmpdir(), 'arbor-lockfollow-home-'));
    process.env.XDG_CONFIG_HOME = home;
    return await adminTarget(undefined);
  } finally {
    process.env = saved;
  }
}

linux(
  'a trusted lock (ours, 0600, live pid, loopback) is followed: the token arrives',
  async (t) => {
    // The control: without it, "nothing arrived" below could mean the test cannot see it.
    const before = received.length;
    const r = await statusBeside(planted(lockOf(recorderUrl)));
    t.is(r.code, 0, r.stderr);
    t.deepEqual(received.slice(before), [`Bearer ${TOKEN}`]);
  },
);

linux('a lock naming a non-loopback address is refused before anything is sent', async (t) => {
  for (const url of ['http://10.0.0.1:1', 'https://arbor.example.com', 'http://0.0.0.0:8080']) {
    const e = await t.throwsAsync(targetBeside(planted(lockOf(url))), {
      instanceOf: AdminTargetError,
    });
    t.regex(e?.message ?? '', /not following the lock file .*arbor\.lock/, url);
    t.regex(e?.message ?? '', /not a loopback address/, url);
    t.regex(e?.message ?? '', /--api URL \(or ARBOR_API_URL\)/, url);
  }
});

linux('a lock written on another host is refused', async (t) => {
  const e = await t.throwsAsync(
    targetBeside(planted(lockOf(recorderUrl, { hostname: 'elsewhere.invalid' }))),
    { instanceOf: AdminTargetError },
  );
  t.regex(e?.message ?? '', /written on host elsewhere\.invalid/);
});

linux(
  'a lock whose pid started at another time, or that records no start time, is not followed',
  async (t) => {
    // Another process has that pid now: the lock is stale, and the command works on the files.
    const reused = await targetBeside(planted(lockOf(recorderUrl, { procStart: '1' })));
    t.is((reused as { kind: string }).kind, 'local');
    const e = await t.throwsAsync(
      targetBeside(planted(lockOf(recorderUrl, { procStart: undefined }))),
      { instanceOf: AdminTargetError },
    );
    t.regex(e?.message ?? '', /not the process that wrote it/);
  },
);

/** Each refusal, through the real CLI: the message says why, and the token never arrives. */
const refusals: Array<[string, () => string, RegExp]> = [
  [
    'a symbolic link to a trusted lock',
    () => {
      const real = planted(lockOf(recorderUrl));
      const dir = mkdtempSync(join(tmpdir(), 'arbor-lockfollow-'));
      symlinkSync(join(real, LOCK_FILE), join(dir, LOCK_FILE));
      return dir;
    },
    /is a symbolic link/,
  ],
  ['a group-writable lock', () => planted(lockOf(recorderUrl), 0o620), /others can write it/],
];
for (const [name, make, why] of refusals) {
  linux(`refused: ${name}; the token never leaves`, async (t) => {
    const before = received.length;
    const r = await statusBeside(make());
    t.is(r.code, 1, r.stderr);
    t.regex(r.stderr, why);
    t.regex(r.stderr, /^arbor: not following the lock file .* to http:\/\/127\.0\.0\.2:\d+: /m);
    t.regex(r.stderr, /--api URL \(or ARBOR_API_URL\)/);
    t.deepEqual(received.slice(before), [], 'the token reached the planted address');
  });
}

const asRoot = hasProc && process.getuid?.() === 0 ? test.serial : test.serial.skip;
asRoot('refused: a lock owned by another user; the token never leaves', async (t) => {
  const dir = planted(lockOf(recorderUrl));
  chownSync(join(dir, LOCK_FILE), 65534, 65534);
  const before = received.length;
  const r = await statusBeside(dir);
  t.is(r.code, 1, r.stderr);
  t.regex(r.stderr, /owned by uid 65534, not by you \(uid 0\)/);
  t.deepEqual(received.slice(before), []);
});
