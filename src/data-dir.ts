import { randomBytes } from 'node:crypto';
import { mkdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { StartupError } from './startup-error.js';

/**
 * `mkdir -p`, one level at a time. Node's own recursive mkdir never returns on a path under
 * procfs (`/proc/nope`: mkdir answers ENOENT although the parent exists, and it retries
 * forever), so the missing levels are found with stat and made one by one: any refusal is
 * an error, never a loop.
 * @throws the filesystem's error (ENOTDIR when a level is a file).
 */
export function makeDirectory(dir: string, mode: number): void {
  const missing: string[] = [];
  for (let at = resolve(dir); ; at = dirname(at)) {
    try {
      if (statSync(at).isDirectory()) break;
      throw Object.assign(new Error(`ENOTDIR: not a directory, '${at}'`), { code: 'ENOTDIR' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    missing.push(at);
    if (dirname(at) === at) break;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d, { mode });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

/**
 * Make sure `dataDir` (DATA_DIR) can hold the server's files before anything uses it: it
 * is created (0700) when missing, must be a directory, and a probe file must be written and
 * removed in it.
 * @throws StartupError naming DATA_DIR and why, in one line.
 */
export function checkDataDir(dataDir: string): void {
  const fail = (why: string) =>
    new StartupError(
      `DATA_DIR=${dataDir} cannot be used: ${why}; set DATA_DIR to a writable directory`,
    );
  try {
    makeDirectory(dataDir, 0o700);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw fail(
      code === 'ENOTDIR' ? 'it is not a directory' : `it cannot be created (${codeOf(e)})`,
    );
  }
  const probe = join(dataDir, `.arbor-probe-${randomBytes(6).toString('hex')}`);
  try {
    writeFileSync(probe, '', { flag: 'wx', mode: 0o600 });
    unlinkSync(probe);
  } catch (e) {
    throw fail(`it is not writable (${codeOf(e)})`);
  }
}

/** `EPERM`, or the message when there is no code. */
function codeOf(e: unknown): string {
  return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
}
