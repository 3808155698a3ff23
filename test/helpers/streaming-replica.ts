import { execFile, execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './process.js';

const run = promisify(execFile);

/** Debian's PostgreSQL 15 server binaries (initdb, pg_ctl, pg_basebackup). */
export const PG_BIN = process.env.ARBOR_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/**
 * Why a streaming replica cannot be started here, or undefined when it can. The tests
 * report themselves skipped for a reason outside CI; in CI (CI=true) they fail instead.
 */
export function replicaUnavailable(): string | undefined {
  for (const b of ['initdb', 'pg_ctl', 'pg_basebackup'])
    if (!existsSync(join(PG_BIN, b))) return `no ${b} in ${PG_BIN} (set ARBOR_PG_BIN)`;
  if (userInfo().uid === 0) {
    try {
      execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
    } catch {
      return 'running as root without a postgres user to run the servers as';
    }
  }
  return undefined;
}

/** A primary and a streaming standby (`pg_basebackup -R`) on loopback, in a temp directory. */
export interface StreamingPair {
  primaryUrl: string;
  standbyUrl: string;
  /** Stops the standby (immediate shutdown), as a crash would. */
  stopStandby(): Promise<void>;
  /** Stops both servers (immediate) and removes their files. */
  stop(): Promise<void>;
}

/**
 * PostgreSQL refuses to run as root: as root, every server command runs as the `postgres`
 * user (Debian's package creates it) over directories it owns.
 */
function asOwner(cmd: string, args: string[]): [string, string[]] {
  return userInfo().uid === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

async function sh(cmd: string, args: string[]): Promise<string> {
  const [c, a] = asOwner(join(PG_BIN, cmd), args);
  try {
    const { stdout } = await run(c, a, { timeout: 120_000 });
    return stdout;
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${err.stderr ?? err.message}`);
  }
}

/** initdb a primary, pg_basebackup -R a standby from it, start both; `stop()` removes all. */
export async function startStreamingPair(): Promise<StreamingPair> {
  const root = mkdtempSync(join(tmpdir(), 'arbor-replica-'));
  if (userInfo().uid === 0) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const uid = Number(stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    chownSync(root, uid, gid);
  }
  const primary = join(root, 'primary');
  const standby = join(root, 'standby');
  const [pPort, sPort] = [await freePort(), await freePort()];
  const started: string[] = [];
  const stop = async () => {
    for (const dir of started.reverse())
      await sh('pg_ctl', ['-D', dir, '-m', 'immediate', 'stop']).catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await sh('initdb', [
      '-D',
      primary,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--no-sync',
    ]);
    // Written as the owner would: appending keeps the file's owner and mode.
    appendFileSync(
      join(primary, 'postgresql.conf'),
      [
        `port = ${pPort}`,
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${root}'`,
        'wal_level = replica',
        'max_wal_senders = 5',
        'hot_standby = on',
        'fsync = off',
        'max_connections = 100',
        // Queries on the standby are never cancelled for replay, nor replay held back long.
        'max_standby_streaming_delay = 30s',
        '',
      ].join('\n'),
    );
    await sh('pg_ctl', ['-D', primary, '-l', join(root, 'primary.log'), '-w', 'start']);
    started.push(primary);
    await sh('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(pPort),
      '-U',
      'postgres',
      '-D',
      standby,
      '-R',
      '-X',
      'stream',
      '--no-sync',
    ]);
    appendFileSync(join(standby, 'postgresql.conf'), `port = ${sPort}\n`);
    await sh('pg_ctl', ['-D', standby, '-l', join(root, 'standby.log'), '-w', 'start']);
    started.push(standby);
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    primaryUrl: `postgres://postgres@127.0.0.1:${pPort}/postgres`,
    standbyUrl: `postgres://postgres@127.0.0.1:${sPort}/postgres`,
    stopStandby: async () => {
      await sh('pg_ctl', ['-D', standby, '-m', 'immediate', 'stop']);
      started.splice(started.indexOf(standby), 1);
    },
    stop,
  };
}
