import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CredentialStore, type CredentialEntry } from './auth-credentials.js';
import { apiAddress } from './api-address.js';
import { arborAudience, exchangeIdToken, publishedLogin, redeemInvite } from './auth-exchange.js';
import { oidcSignIn, type SignedIn } from './auth-oidc.js';

const USAGE = `usage: arbor auth login [--api <url>] [--issuer <oidc issuer> --client-id <id>] [--scope <s>]...
                        [--headless | --no-browser] [--invite <code>] [--identity <identity>]
       arbor auth login --id-token-file <path|-> [--identity <identity>] [--api <url>]

Signs in at an OIDC provider (browser, authorization code + PKCE; --headless prints the
address and reads back the one the browser ended on), exchanges the ID token at Arbor's
STS for an API token of your user identity (or of --identity: a uid, or a path of names
such as acme/ci, resolved with the token this address already has (ARBOR_TOKEN, an
earlier login, ARBOR_ADMIN_TOKEN), else by signing in as yourself first), and keeps it in
$XDG_CONFIG_HOME/arbor/credentials.json (mode 0600), one entry per API address.
--invite redeems a group invite right after signing in. Then: arbor auth token.
Defaults: --api $ARBOR_API_URL or http://localhost:8080; --issuer/--client-id
$ARBOR_LOGIN_ISSUER/$ARBOR_LOGIN_CLIENT_ID, else those of the last login to that API,
else the provider the server publishes at /.well-known/arbor-login;
--id-token-file is read again whenever a new API token is needed (rotating tokens);
--audience (the STS aud) the issuer Arbor's discovery document names (ARBOR_ISSUER_URL).
`;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

/** One line of standard input (the pasted address); the stream is done with afterwards. */
async function readLine(prompt: string): Promise<string> {
  process.stderr.write(prompt);
  let buf = '';
  for await (const c of process.stdin as AsyncIterable<Buffer>) {
    buf += c.toString('utf8');
    const nl = buf.indexOf('\n');
    if (nl >= 0) return buf.slice(0, nl);
  }
  if (buf.trim() !== '') return buf;
  throw new Error('no address was pasted');
}

function openBrowser(url: string): void {
  const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
  spawn(opener, [url], { stdio: 'ignore', detached: true })
    .on('error', () => undefined)
    .unref();
}

async function idTokenFromFile(f: string): Promise<string> {
  return (f === '-' ? await readStdin() : await readFile(f, 'utf8')).trim();
}

function browserOrHeadless(
  o: { issuer: string; clientId: string; scopes: string[] },
  headless: boolean,
  noBrowser: boolean,
): Promise<SignedIn> {
  return oidcSignIn(o, {
    onAuthorizeUrl: (url) => {
      process.stderr.write(`Open this address to sign in:\n\n  ${url}\n\n`);
      if (!headless && !noBrowser) openBrowser(url);
    },
    ...(headless
      ? {
          readRedirect: () =>
            readLine(
              'Then paste the address your browser ended on (http://127.0.0.1/callback?…):\n',
            ),
        }
      : {}),
  });
}

/** What refreshing later needs, and who signed in. */
function providerFields(
  issuer: string,
  clientId: string,
  scopes: string[],
  s: SignedIn,
): Partial<CredentialEntry> {
  return {
    issuer,
    clientId,
    scopes,
    displayName: s.claims.name ?? s.claims.email ?? s.claims.sub,
    ...(s.refreshToken ? { refreshToken: s.refreshToken } : {}),
  };
}

/** `arbor auth login …`; returns the process exit code. */
export async function authLoginCommand(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        identity: { type: 'string' },
        api: { type: 'string' },
        audience: { type: 'string' },
        issuer: { type: 'string' },
        'client-id': { type: 'string' },
        scope: { type: 'string', multiple: true },
        'id-token-file': { type: 'string' },
        'no-browser': { type: 'boolean' },
        headless: { type: 'boolean' },
        invite: { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  try {
    return await login(values);
  } catch (e) {
    process.stderr.write(`arbor auth login: ${(e as Error).message}\n`);
    // A name that did not resolve: the resolver's hints (did you mean, the candidates).
    const details = (e as { details?: unknown }).details;
    if (Array.isArray(details)) for (const line of details) process.stderr.write(`${line}\n`);
    return 1;
  }
}

interface LoginFlags {
  identity?: string;
  api?: string;
  audience?: string;
  issuer?: string;
  'client-id'?: string;
  scope?: string[];
  'id-token-file'?: string;
  'no-browser'?: boolean;
  headless?: boolean;
  invite?: string;
}

/** Flags first, then the environment, then what the last login to this API used. */
function settings(values: LoginFlags, previous: CredentialEntry | undefined) {
  return {
    issuer: values.issuer ?? process.env.ARBOR_LOGIN_ISSUER ?? previous?.issuer,
    clientId: values['client-id'] ?? process.env.ARBOR_LOGIN_CLIENT_ID ?? previous?.clientId,
    scopes: values.scope ?? previous?.scopes ?? [],
    audience: values.audience ?? previous?.audience,
  };
}

/**
 * Nothing given or remembered: the provider the server publishes (`/.well-known/arbor-login`),
 * as chainctl asks its API; the audience from there too, else from Arbor's discovery.
 */
async function withPublished(
  api: string,
  s: { issuer?: string | undefined; clientId?: string | undefined; audience?: string | undefined },
  fromFile: boolean,
): Promise<{ issuer?: string | undefined; clientId?: string | undefined; audience: string }> {
  let { issuer, clientId } = s;
  const published = !fromFile && !(issuer && clientId) ? await publishedLogin(api) : undefined;
  if (published?.issuer && published.clientId)
    [issuer, clientId] = [published.issuer, published.clientId];
  const audience = s.audience ?? published?.audience ?? (await arborAudience(api));
  return { issuer, clientId, audience };
}

async function login(values: LoginFlags): Promise<number> {
  const api = apiAddress(values.api);
  const store = new CredentialStore();
  const { scopes, ...rest } = settings(values, await store.get(api));
  const tokenFile = values['id-token-file'];
  const { issuer, clientId, audience } = await withPublished(api, rest, tokenFile !== undefined);
  if (!tokenFile && !(issuer && clientId)) {
    process.stderr.write(
      `arbor auth login: ${api} publishes no login provider (ARBOR_LOGIN_ISSUER): give --issuer and --client-id, or --id-token-file\n${USAGE}`,
    );
    return 2;
  }
  const signedIn = tokenFile
    ? undefined
    : await browserOrHeadless(
        { issuer: issuer!, clientId: clientId!, scopes },
        values.headless === true,
        values['no-browser'] === true,
      );
  const idToken = signedIn?.idToken ?? (await idTokenFromFile(tokenFile!));
  const requested =
    values.identity === undefined
      ? undefined
      : await identityUid(api, values.identity, () => exchangeIdToken(api, audience, idToken));
  const got = await exchangeIdToken(api, audience, idToken, requested);
  const entry: CredentialEntry = {
    token: got.token,
    expiry: got.expiry,
    identity: got.identity,
    audience,
    // The uid, so a refresh asks for the same identity whatever is named so later.
    ...(requested ? { requestedIdentity: requested } : {}),
    ...(tokenFile && tokenFile !== '-' ? { idTokenFile: resolve(tokenFile) } : {}),
    ...(signedIn ? providerFields(issuer!, clientId!, scopes, signedIn) : {}),
  };
  await store.put(api, entry);
  const identity = await identityPathFor(api, got.token, got.identity);
  process.stderr.write(
    `Signed in to ${api} as ${signedInAs(entry.displayName, identity)}; ` +
      `the API token is valid until ${got.expiry}.\n`,
  );
  if (values.invite) {
    const joined = await redeemInvite(api, got.token, values.invite);
    process.stderr.write(`Invite redeemed: ${joined.role} at ${joined.group}.\n`);
  }
  return 0;
}

/**
 * `--identity` as a uid: as given when it is one; else the name resolved (identities:resolve,
 * under the visibility of whoever asks) with the token this address already has, or failing
 * that with the user's own, from signing in as themselves (`asSelf`). A workload with
 * neither cannot resolve a name and is told to give the uid.
 * @throws CliError as resolveUid (no identity named …, ambiguous); Error when nobody may ask.
 */
async function identityUid(
  api: string,
  value: string,
  asSelf: () => Promise<{ token: string }>,
): Promise<string> {
  const [{ isValidUidp }, { resolveUid }, { openSession }, { createArborClient }] =
    await Promise.all([
      import('../core/uidp.js'),
      import('./name-resolver.js'),
      import('./api-session.js'),
      import('../client/index.js'),
    ]);
  if (isValidUidp(value)) return value;
  // The address's own token if there is one; else the user's own, signing in as themselves.
  const session = await openSession(api).catch(async () => {
    const { token } = await asSelf().catch((e: unknown) => {
      throw new Error(
        `--identity ${value} is a name, and there is no token here to look it up with ` +
          `(signing in as yourself: ${(e as Error).message}); give the identity's uid, ` +
          'or set ARBOR_TOKEN to a token that may read it',
      );
    });
    const source = 'arbor auth login' as const;
    return { api, token, source, client: createArborClient(api, { token }) };
  });
  return resolveUid(session, 'identities', value);
}

/**
 * The signed-in identity's path of names (`acme/people/alice`), read with its new token; its
 * uid when the identity may not read itself or a group above it.
 */
async function identityPathFor(api: string, token: string, uid: string): Promise<string> {
  const { createArborClient } = await import('../client/index.js');
  const client = createArborClient(api, { token });
  try {
    const segments = uid.split('/');
    const groups = await Promise.all(
      segments.slice(0, -1).map(async (_, k) => {
        const at = segments.slice(0, k + 1).join('/');
        const r = await client.GET('/iam/v2beta1/groups/{uid}', { params: { path: { uid: at } } });
        return r.data?.name;
      }),
    );
    const me = await client.GET('/iam/v2beta1/identities/{uid}', { params: { path: { uid } } });
    const names = [...groups, me.data?.name];
    return names.every((n) => typeof n === 'string' && n !== '') ? names.join('/') : uid;
  } catch {
    return uid;
  }
}

/** `Alice (identity acme/people/alice)`, `Alice` when they are one name, or `identity acme/ci`. */
function signedInAs(displayName: string | undefined, identity: string): string {
  if (displayName === undefined) return `identity ${identity}`;
  return displayName === identity ? displayName : `${displayName} (identity ${identity})`;
}
