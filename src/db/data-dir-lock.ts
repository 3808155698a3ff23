import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { isIPv4 } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { makeDirectory } from '../data-dir.js';

/** Who holds a data directory, as its lock file says (JSON, one object). */
export interface DataDirOwner {
  pid: number;
  /** `server` for `arbor serve`, else the command (`import-advisories`, `restore`, …). */
  role: string;
  /** Where that server answers (a server only): what other commands use instead of the files. */
  apiUrl?: string;
  hostname: string;
  /** The process's start time in clock ticks since boot (Linux), to tell a reused pid apart. */
  procStart?: string;
  /** Unique to this holder: a lock file is only ever removed by the holder that wrote it. */
  nonce: string;
  startedAt: string;
}

/**
 * Another live process holds the data directory. The message says who and what to do; the
 * process that gets this has touched nothing.
 */
export class DataDirBusyError extends Error {
  /** `requester`: the role of the refused command, so that the advice fits what it can do. */
  constructor(
    readonly dataDir: string,
    readonly owner: DataDirOwner,
    requester?: string,
  ) {
    const who = owner.role === 'server' ? 'the server' : `arbor ${owner.role}`;
    const where = owner.hostname === hostname() ? '' : ` on host ${owner.hostname}`;
    const how =
      owner.role !== 'server'
        ? 'wait for it to finish or stop it'
        : (requester !== undefined && SERVER_BUSY_ADVICE[requester]) ||
          `use --api${owner.apiUrl ? ` ${owner.apiUrl}` : ''} (or ARBOR_API_URL) or stop it`;
    super(`${who} (pid ${owner.pid}${where}) has the data directory ${dataDir}; ${how}`);
    this.name = 'DataDirBusyError';
  }
}

/**
 * What to do instead, for the commands that have no `--api` (they would open the files
 * themselves): suggesting a flag they refuse would send people in a circle.
 */
const SERVER_BUSY_ADVICE: Readonly<Record<string, string>> = {
  migrate: 'stop it first (the server applies pending migrations itself when it starts)',
  restore: 'stop it first: a restore replaces the files it has open',
  server: 'stop it, or give this one another DATA_DIR',
};

export const LOCK_FILE = 'arbor.lock';
/** A takeover that has held its mutex this long crashed inside it (it takes milliseconds). */
const TAKEOVER_STALE_MS = 10_000;

/** Field 22 of /proc/<pid>/stat (start time); undefined where there is no procfs. */
function procStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * Whether the process that wrote `o` still runs: its pid answers signal 0 and, where procfs
 * tells, started when the lock says (else the pid was reused by another process). A lock
 * from another host cannot be checked and counts as alive.
 */
export function ownerAlive(o: DataDirOwner): boolean {
  if (o.pid <= 0) return false;
  if (o.hostname !== hostname()) return true;
  try {
    process.kill(o.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const now = procStart(o.pid);
  return o.procStart === undefined || now === undefined || now === o.procStart;
}

function readOwner(file: string): DataDirOwner | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const o = JSON.parse(text) as DataDirOwner;
    if (Number.isInteger(o.pid) && o.pid > 0 && typeof o.nonce === 'string') return o;
  } catch {
    /* below */
  }
  // Lock files are linked into place whole, so this is not one of ours being written: it
  // names nobody, and a pid of 0 is never alive (see ownerAlive).
  return { pid: 0, role: 'unknown', hostname: hostname(), nonce: '', startedAt: '' };
}

/** Block this thread for `ms` (lock attempts are synchronous and rare). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The live owner of `dataDir`, if any (a stale lock counts as none). */
export function dataDirOwner(dataDir: string): DataDirOwner | undefined {
  const o = readOwner(join(dataDir, LOCK_FILE));
  return o && ownerAlive(o) ? o : undefined;
}

/** A held data directory; `release` is idempotent and only removes this holder's own file. */
export interface DataDirLock {
  readonly owner: DataDirOwner;
  /** Say where this server answers (known once its port is bound). */
  setApiUrl(url: string): void;
  release(): void;
}

/**
 * Take `dataDir` for this process: create its lock file with O_EXCL, or, when the file names
 * a process that is gone (a `kill -9`, a crash), take the stale lock over. Takeovers are
 * serialised by a mkdir mutex and re-check the file inside it, so two starters racing for
 * one stale lock cannot both win, and neither can remove a lock that a live process just made.
 * @throws DataDirBusyError when a live process holds it.
 */
export function lockDataDir(dataDir: string, who: { role: string; apiUrl?: string }): DataDirLock {
  // Private: it holds the database and the keys, and the lock says where to send a token.
  makeDirectory(dataDir, 0o700);
  const file = join(dataDir, LOCK_FILE);
  const owner: DataDirOwner = {
    pid: process.pid,
    role: who.role,
    ...(who.apiUrl ? { apiUrl: who.apiUrl } : {}),
    hostname: hostname(),
    ...(procStart(process.pid) ? { procStart: procStart(process.pid) } : {}),
    nonce: randomBytes(12).toString('hex'),
    startedAt: new Date().toISOString(),
  };
  // Written whole under a private name, then linked to the lock name: link(2) is atomic and
  // fails when the name exists (O_EXCL semantics), and a reader never sees half a file.
  const tmp = `${file}.${process.pid}.${owner.nonce}`;
  writeFileSync(tmp, `${JSON.stringify(owner)}\n`, { mode: 0o600, flag: 'wx' });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(tmp, file);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 100) throw e;
      }
      const current = readOwner(file);
      if (current && ownerAlive(current)) throw new DataDirBusyError(dataDir, current, who.role);
      if (current && !takeOver(dataDir, file, current)) pause(50);
    }
  } finally {
    unlinkSync(tmp);
  }
  let held = true;
  return {
    owner,
    setApiUrl(url) {
      if (!held || readOwner(file)?.nonce !== owner.nonce) return;
      owner.apiUrl = url;
      // rename(2) over our own file: readers see the old or the new content, never half.
      const next = `${file}.${process.pid}.${owner.nonce}`;
      writeFileSync(next, `${JSON.stringify(owner)}\n`, { mode: 0o600, flag: 'wx' });
      renameSync(next, file);
    },
    release() {
      if (!held) return;
      held = false;
      if (readOwner(file)?.nonce === owner.nonce) unlinkSync(file);
    },
  };
}

/**
 * Remove the stale lock `seen`, under the takeover mutex, if it is still the file there.
 * @returns false when another process holds the mutex (try again shortly).
 */
function takeOver(dataDir: string, file: string, seen: DataDirOwner): boolean {
  const mutex = join(dataDir, `${LOCK_FILE}.takeover`);
  try {
    mkdirSync(mutex);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    try {
      if (Date.now() - statSync(mutex).mtimeMs > TAKEOVER_STALE_MS) rmdirSync(mutex);
    } catch {
      /* the other taker finished meanwhile */
    }
    return false;
  }
  try {
    const now = readOwner(file);
    if (now && now.nonce === seen.nonce && now.pid === seen.pid && !ownerAlive(now)) {
      unlinkSync(file);
    }
  } finally {
    rmdirSync(mutex);
  }
  return true;
}

/**
 * Why the CLI must not send a token to the server `dataDir`'s lock names (`owner`, as read
 * before), or undefined when it may. Whoever can write the lock chooses where the admin
 * token goes, so it is followed only when all of this holds:
 * - the lock is a regular file, not a symbolic link, owned by this user and writable by
 *   nobody else (read through the descriptor that was checked, so it cannot be swapped);
 * - it is still the lock `owner` was read from, written on this host;
 * - its pid runs and started when the lock says (`/proc`); where the start time cannot be
 *   told (no procfs), it is not followed rather than trusted;
 * - its address is http(s) on a loopback address (127.0.0.0/8, ::1, localhost).
 */
export function lockFollowRefusal(dataDir: string, owner: DataDirOwner): string | undefined {
  const file = join(dataDir, LOCK_FILE);
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ELOOP' ? 'it is a symbolic link' : `it cannot be read (${code})`;
  }
  let text: string;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return 'it is not a regular file';
    const uid = process.getuid?.();
    if (uid === undefined) return 'this system cannot tell who owns it';
    if (st.uid !== uid) return `it is owned by uid ${st.uid}, not by you (uid ${uid})`;
    if ((st.mode & 0o022) !== 0)
      return `others can write it (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')})`;
    text = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  let now: Partial<DataDirOwner>;
  try {
    now = JSON.parse(text) as Partial<DataDirOwner>;
  } catch {
    return 'it is not a lock file';
  }
  if (now.nonce !== owner.nonce || now.apiUrl !== owner.apiUrl) return 'it changed while read';
  if (owner.hostname !== hostname()) return `it was written on host ${owner.hostname}`;
  const started = procStart(owner.pid);
  if (started === undefined) return `the start time of pid ${owner.pid} cannot be read here`;
  if (owner.procStart !== started)
    return `pid ${owner.pid} is not the process that wrote it (its start time differs)`;
  if (!isLoopbackUrl(owner.apiUrl)) return 'its address is not a loopback address';
  return undefined;
}

/** http(s) on 127.0.0.0/8, [::1] or localhost: traffic that stays on this machine. */
function isLoopbackUrl(url: string | undefined): boolean {
  let u: URL;
  try {
    u = new URL(url ?? '');
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return false;
  if (u.username !== '' || u.password !== '') return false;
  const h = u.hostname;
  return h === 'localhost' || h === '[::1]' || (isIPv4(h) && h.startsWith('127.'));
}
