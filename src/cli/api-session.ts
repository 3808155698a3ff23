import { createArborClient, type ArborClient } from '../client/index.js';
import { freshEntry } from './auth-refresh.js';
import { CredentialStore } from './auth-credentials.js';
import { apiAddress } from './api-address.js';
import { CliError, EXIT, rpcFailure, unreachable } from './cli-errors.js';

/** Where the token of a command came from (whoami says it). */
export type TokenSource = 'ARBOR_TOKEN' | 'arbor auth login' | 'ARBOR_ADMIN_TOKEN';

/** An API address, a token for it and the typed client that sends it. */
export interface Session {
  api: string;
  token: string;
  source: TokenSource;
  client: ArborClient;
  /** Who signed in, as the provider named them (a login's token only). */
  displayName?: string;
}

/**
 * The API address (`--api`, `ARBOR_API_URL`, `http://localhost:8080`) and a token:
 * `ARBOR_TOKEN`, else the one `arbor auth login` keeps for that address (refreshed as
 * `arbor auth token` does), else `ARBOR_ADMIN_TOKEN`.
 * @throws CliError (exit 6) when there is none.
 */
export async function openSession(apiFlag?: string): Promise<Session> {
  const api = apiAddress(apiFlag);
  const env = process.env;
  let token: string | undefined;
  let source: TokenSource = 'ARBOR_TOKEN';
  let displayName: string | undefined;
  if (env.ARBOR_TOKEN) token = env.ARBOR_TOKEN;
  if (token === undefined) {
    const store = new CredentialStore();
    const entry = await store.get(api);
    const fresh = entry && (await freshEntry(store, api, entry));
    if (fresh) [token, source, displayName] = [fresh.token, 'arbor auth login', fresh.displayName];
    else if (entry && !env.ARBOR_ADMIN_TOKEN)
      throw new CliError(`your session for ${api} has expired`, EXIT.DENIED, [
        `  run: arbor auth login --api ${api}`,
      ]);
  }
  if (token === undefined && env.ARBOR_ADMIN_TOKEN) {
    [token, source] = [env.ARBOR_ADMIN_TOKEN, 'ARBOR_ADMIN_TOKEN'];
  }
  if (token === undefined)
    throw new CliError(`not signed in to ${api}`, EXIT.DENIED, [
      `  run: arbor auth login --api ${api}   (or set ARBOR_TOKEN)`,
      '  a development server (npm start) prints a sign-in token: export ARBOR_TOKEN=<that token>',
    ]);
  return {
    api,
    token,
    source,
    client: createArborClient(api, { token }),
    ...(displayName ? { displayName } : {}),
  };
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
interface Init {
  params?: { path?: { uid: string }; query?: Record<string, unknown> };
  body?: unknown;
  headers?: Record<string, string>;
}
type Answer = { data?: unknown; error?: unknown; response: Response };
/**
 * The typed client, called with a path chosen at run time (the kinds table): the template
 * is one of the document's, so only the compile-time check of its literal is given up.
 */
type LooseClient = Record<Method, (path: string, init: Init) => Promise<Answer>>;

/**
 * One API call. `template` is a path of the OpenAPI document (`/iam/v2beta1/groups/{uid}`).
 * @returns the answer's JSON. @throws CliError with the server's google.rpc message (exit
 * code by its code), or exit 7 when the API cannot be reached.
 */
export async function call<T = unknown>(
  s: Session,
  method: Method,
  template: string,
  init: Init = {},
): Promise<T> {
  return (await callForEtag<T>(s, method, template, init)).data;
}

/** {@link call}, with the answer's `ETag` (empty when it has none). */
export async function callForEtag<T = unknown>(
  s: Session,
  method: Method,
  template: string,
  init: Init = {},
): Promise<{ data: T; etag: string }> {
  let answer: Answer;
  try {
    answer = await (s.client as unknown as LooseClient)[method](template, init);
  } catch (e) {
    if (e instanceof SyntaxError)
      throw new CliError(`${s.api} did not answer JSON: is it an Arbor API?`, EXIT.FAILURE);
    throw unreachable(s.api, e);
  }
  if (answer.error !== undefined || !answer.response.ok)
    throw rpcFailure(answer.error, answer.response.status);
  return { data: answer.data as T, etag: answer.response.headers.get('etag') ?? '' };
}
