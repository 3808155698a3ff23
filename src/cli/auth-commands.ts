import { parseArgs } from 'node:util';
import { CredentialStore, type CredentialEntry } from './auth-credentials.js';
import { apiAddress } from './api-address.js';
import { authLoginCommand } from './auth-login.js';
import { freshEntry } from './auth-refresh.js';

const USAGE = `usage: arbor auth <login|token|status|logout|revoke|sessions> [--api <url>]

  login    sign in (see arbor auth login --help)
  token    print a valid API token, refreshing it when it is about to expire
  status   who is signed in to the API address, with which token, until when
  logout   forget the credentials for the API address (--all: for every address)
  revoke   revoke an API token (default: the current one) and those exchanged from it
  sessions list your live API tokens; sessions revoke <id> revokes one
`;

/** `arbor auth …`; returns the process exit code. */
export async function authCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'login':
      return authLoginCommand(rest);
    case 'token':
    case 'status':
    case 'logout':
      return simple(sub, rest);
    default:
      process.stderr.write(USAGE);
      return 2;
  }
}

async function simple(sub: 'token' | 'status' | 'logout', argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { api: { type: 'string' }, all: { type: 'boolean' } },
    }));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const api = apiAddress(values.api);
  const store = new CredentialStore();
  try {
    if (sub === 'logout') return await logout(store, api, values.all === true);
    const entry = await store.get(api);
    if (!entry) {
      process.stderr.write(`Not signed in to ${api}: run arbor auth login --api ${api}\n`);
      return 1;
    }
    if (sub === 'status') return status(api, entry);
    const fresh = await freshEntry(store, api, entry);
    if (!fresh) {
      process.stderr.write(
        `Your session for ${api} has expired: run arbor auth login --api ${api}\n`,
      );
      return 1;
    }
    process.stdout.write(`${fresh.token}\n`);
    return 0;
  } catch (e) {
    process.stderr.write(`arbor auth ${sub}: ${(e as Error).message}\n`);
    return 1;
  }
}

function status(api: string, e: CredentialEntry): number {
  const left = Date.parse(e.expiry) - Date.now();
  const lines = [
    `API:       ${api}`,
    `identity:  ${e.identity}${e.displayName ? ` (${e.displayName})` : ''}`,
    ...(e.issuer ? [`provider:  ${e.issuer} (client ${e.clientId ?? '?'})`] : []),
    `token:     ${e.token.slice(0, 12)}…${e.token.slice(-6)}`,
    `expires:   ${e.expiry} (${left > 0 ? `in ${Math.round(left / 60_000)} min` : 'expired'})`,
    `refresh:   ${e.idTokenFile ? `from ${e.idTokenFile}, read again each time` : e.refreshToken ? 'yes' : 'no (sign in again when it expires)'}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

async function logout(store: CredentialStore, api: string, all: boolean): Promise<number> {
  const apis = all ? Object.keys(await store.all()) : [api];
  let removed = 0;
  for (const a of apis) if (await store.remove(a)) removed++;
  process.stderr.write(
    removed === 0
      ? `Not signed in to ${api}.\n`
      : `Signed out of ${all ? `${removed} API address(es)` : api}.\n`,
  );
  return 0;
}
