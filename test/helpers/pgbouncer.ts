import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './process.js';

const run = promisify(execFile);
const SCRIPT = 'scripts/pgbouncer/pgbouncer.sh';

/** Whether Debian's pgbouncer is installed here. */
export function havePgBouncer(): boolean {
  return ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].some((p) => existsSync(p));
}

export interface PgBouncer {
  /** `upstream` with PgBouncer's host and port. */
  url: string;
  stop(): Promise<void>;
}

/** PgBouncer in transaction mode in front of `upstream`, on a free port. */
export async function startPgBouncer(upstream: string): Promise<PgBouncer> {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-pgbouncer-'));
  rmdirSync(dir); // the script makes it, with the owner PgBouncer runs as
  const script = (...args: string[]) => run('bash', [SCRIPT, ...args]).then((r) => r.stdout.trim());
  const url = await script('start', dir, String(await freePort()), upstream);
  return { url, stop: () => script('stop', dir).then(() => undefined) };
}
