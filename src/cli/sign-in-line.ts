import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { writeSecretFile } from '../auth/secret-file.js';
import type { SignInToken } from '../auth/sign-in-token.js';

/**
 * How a development run hands its sign-in token to the person who started it: one line on
 * their terminal, or, when stdout is no terminal (a file, a journal, CI logs, a pipe that
 * anyone may be keeping), a file only they can read in DATA_DIR, whose path is logged.
 * Either says everything the CLI needs: the token, and the address when the CLI's default
 * would not reach this server.
 */

/** In DATA_DIR: a shell file (`. .data/sign-in.sh`) with the console's address and the exports. */
export const SIGN_IN_FILE = 'sign-in.sh';

/** What the CLI calls with ARBOR_API_URL unset (cli/api-address.ts), and loopback's name for it. */
const CLI_DEFAULT_URLS: ReadonlySet<string> = new Set([
  'http://localhost:8080',
  'http://127.0.0.1:8080',
]);

/** `export ARBOR_TOKEN=…`, with `ARBOR_API_URL=…` first when the CLI's default is elsewhere. */
export function cliExports(url: string, token: string): string {
  return CLI_DEFAULT_URLS.has(url)
    ? `export ARBOR_TOKEN=${token}`
    : `export ARBOR_API_URL=${url} ARBOR_TOKEN=${token}`;
}

/**
 * The one line for a terminal (as Jupyter prints one): never through the logger, so no log
 * collector keeps the token. The console reads `#token=` and clears the address.
 */
export function signInLine(token: string, url: string, consoleUrl: string | undefined): string {
  const cli = `for the CLI: ${cliExports(url, token)}`;
  return consoleUrl
    ? `Sign in: open ${consoleUrl}#token=${token} (this run's token, admin; ${cli})`
    : `Sign in with this run's admin token (console not built: npm run build): ${cli}`;
}

/**
 * Writes the sign-in file (0600, replacing any earlier one without following a link) and
 * returns its path. The token in it is void once this process exits.
 * @throws the filesystem's error.
 */
export function writeSignInFile(
  dataDir: string,
  signIn: SignInToken,
  url: string,
  consoleUrl: string | undefined,
): string {
  const path = join(dataDir, SIGN_IN_FILE);
  const lines = [
    `# Arbor development run (pid ${process.pid}): this run's admin token, void when it stops`,
    `# or at ${new Date(signIn.expiresAt).toISOString()}. Readable by you alone: keep it so.`,
    consoleUrl
      ? `# The console: ${consoleUrl}#token=${signIn.token}`
      : '# The console is not built (npm run build).',
    `# The CLI: . ${path}`,
    cliExports(url, signIn.token),
  ];
  writeSecretFile(path, `${lines.join('\n')}\n`);
  return path;
}

/** Removes the sign-in file of a run that stops, if there is one; never throws. */
export function removeSignInFile(dataDir: string): void {
  try {
    unlinkSync(join(dataDir, SIGN_IN_FILE));
  } catch {
    /* none was written (a terminal got the line), or it is gone already */
  }
}
