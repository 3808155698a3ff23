import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './process.js';

const run = promisify(execFile);
const SCRIPT = 'scripts/postgres-ha/cluster.sh';

/** Whether Debian's pg_auto_failover (pg_autoctl) is installed here. */
export function havePgAutoFailover(): boolean {
  return ['/usr/bin/pg_autoctl', '/usr/local/bin/pg_autoctl'].some((p) => existsSync(p));
}

/**
 * A pg_auto_failover formation on loopback (scripts/postgres-ha/cluster.sh): a monitor, a
 * primary and a synchronous standby, on free ports.
 */
export interface HaCluster {
  /** `postgres://postgres@127.0.0.1:p1,127.0.0.1:p2/arbor?target_session_attrs=read-write`. */
  url: string;
  /** The single-host URL of each node, node1 first. */
  nodeUrls: [string, string];
  /** SIGKILL the primary's keeper and postgres; resolves with the node's name. */
  killPrimary(): Promise<string>;
  /** The monitor's view: `name reportedstate goalstate` per node. */
  state(): Promise<string>;
  stop(): Promise<void>;
}

export async function startHaCluster(): Promise<HaCluster> {
  // Under /tmp: the script hands the directory to the postgres user, which must reach it.
  const dir = mkdtempSync(join(tmpdir(), 'arbor-pg-ha-'));
  const [m, p1, p2] = [await freePort(), await freePort(), await freePort()];
  const script = (...args: string[]) =>
    run('bash', [SCRIPT, ...args], { maxBuffer: 1 << 20 }).then((r) => r.stdout.trim());
  try {
    const url = await script('start', dir, String(m), String(p1), String(p2));
    return {
      url,
      nodeUrls: [
        `postgres://postgres@127.0.0.1:${p1}/arbor`,
        `postgres://postgres@127.0.0.1:${p2}/arbor`,
      ],
      killPrimary: () => script('kill-primary', dir),
      state: () => script('state', dir),
      stop: () => script('stop', dir).then(() => undefined),
    };
  } catch (e) {
    await script('stop', dir).catch(() => undefined);
    throw e;
  }
}
