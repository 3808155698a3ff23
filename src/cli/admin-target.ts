import { createArborClient, type ArborClient, type Status } from '../client/index.js';
import { loadConfig, type Config } from '../config.js';
import { DataDirBusyError, dataDirOwner } from '../db/data-dir-lock.js';
import { AdminTargetError } from './admin-target-error.js';
import { ensureFresh } from './auth-commands.js';
import { CredentialStore } from './auth-credentials.js';

export { AdminTargetError };

/** Where an admin command does its work: the database itself, or a server's API. */
export type AdminTarget =
  { kind: 'local'; config: Readonly<Config> } | { kind: 'api'; url: string; client: ArborClient };

/**
 * The token for `url`: ARBOR_TOKEN, else ARBOR_ADMIN_TOKEN, else what `arbor auth login`
 * keeps for that address (refreshed when it is about to expire).
 * @throws AdminTargetError when there is none.
 */
async function tokenFor(url: string): Promise<string> {
  const env = process.env.ARBOR_TOKEN || process.env.ARBOR_ADMIN_TOKEN;
  if (env) return env;
  const store = new CredentialStore();
  const entry = await store.get(url);
  const fresh = entry && (await ensureFresh(store, url, entry));
  if (fresh) return fresh.token;
  throw new AdminTargetError(
    `no token for ${url}: set ARBOR_TOKEN or ARBOR_ADMIN_TOKEN, or run arbor auth login --api ${url}`,
  );
}

/**
 * `--api URL` or ARBOR_API_URL: that server. Otherwise, on an embedded database that a
 * running server owns: that server, at the address its lock file gives (PGlite is one
 * process; the files are the server's). Otherwise the configured database, directly.
 * @throws DataDirBusyError when another command holds the data directory;
 *   AdminTargetError when an API needs a token and there is none; ConfigError.
 */
export async function adminTarget(api: string | undefined): Promise<AdminTarget> {
  let url = (api ?? process.env.ARBOR_API_URL)?.replace(/\/+$/, '');
  if (url === undefined) {
    const config = loadConfig();
    const owner = config.databaseUrl === undefined ? dataDirOwner(config.dataDir) : undefined;
    if (!owner) return { kind: 'local', config };
    if (owner.role !== 'server' || !owner.apiUrl) throw new DataDirBusyError(config.dataDir, owner);
    url = owner.apiUrl;
    process.stderr.write(
      `arbor: the server (pid ${owner.pid}) has the data directory: going through its API at ${url}\n`,
    );
  }
  return { kind: 'api', url, client: createArborClient(url, { token: await tokenFor(url) }) };
}

/** The message of a refused API call, for `arbor: <command>: <message>`. */
export function statusMessage(error: Status | undefined, response: Response): string {
  return error?.message ?? `HTTP ${response.status} ${response.statusText}`;
}
