import type { ArborClient, Status } from '../client/index.js';
import { loadConfig, type Config } from '../config.js';
import { join } from 'node:path';
import {
  DataDirBusyError,
  LOCK_FILE,
  dataDirOwner,
  lockFollowRefusal,
} from '../db/data-dir-lock.js';
import { AdminTargetError } from './admin-target-error.js';
import { openSession, type Session } from './api-session.js';

export { AdminTargetError };

/** Where an admin command does its work: the database itself, or a server's API. */
export type AdminTarget =
  | { kind: 'local'; config: Readonly<Config> }
  | { kind: 'api'; url: string; client: ArborClient; session: Session };

/**
 * `--api URL` or ARBOR_API_URL: that server. Otherwise, on an embedded database that a
 * running server owns: that server, at the address its lock file gives (PGlite is one
 * process; the files are the server's), when that lock can be trusted (lockFollowRefusal).
 * Otherwise the configured database, directly.
 * @throws DataDirBusyError when another command holds the data directory; AdminTargetError
 *   when its server's lock is not followed;
 *   CliError when an API needs a token and there is none (see openSession); ConfigError.
 */
export async function adminTarget(api: string | undefined): Promise<AdminTarget> {
  let url = (api ?? process.env.ARBOR_API_URL)?.replace(/\/+$/, '');
  if (url === undefined) {
    const config = loadConfig();
    const owner = config.databaseUrl === undefined ? dataDirOwner(config.dataDir) : undefined;
    if (!owner) return { kind: 'local', config };
    if (owner.role !== 'server' || !owner.apiUrl) throw new DataDirBusyError(config.dataDir, owner);
    // Checked before anything is sent: whoever wrote the lock would choose where the token goes.
    const refused = lockFollowRefusal(config.dataDir, owner);
    if (refused !== undefined)
      throw new AdminTargetError(
        `not following the lock file ${join(config.dataDir, LOCK_FILE)} to ${owner.apiUrl}: ` +
          `${refused}; to reach a server, name it with --api URL (or ARBOR_API_URL)`,
      );
    url = owner.apiUrl;
    process.stderr.write(
      `arbor: the server (pid ${owner.pid}) has the data directory: going through its API at ${url}\n`,
    );
  }
  const session = await openSession(url);
  return { kind: 'api', url, client: session.client, session };
}

/** The message of a refused API call, for `arbor: <command>: <message>`. */
export function statusMessage(error: Status | undefined, response: Response): string {
  return error?.message ?? `HTTP ${response.status} ${response.statusText}`;
}
