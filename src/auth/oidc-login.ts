import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A person's way to an API token: an OIDC authorization-code login with PKCE on a
 * loopback redirect (RFC 8252), whose ID token is then exchanged at Arbor's STS for an
 * identity the person may assume. Deliberately small and standard; no client secret.
 */
export interface LoginOptions {
  /** The OIDC provider the person logs in at. */
  issuer: string;
  clientId: string;
  scopes?: string[];
  /** Called with the URL the person must open (the CLI prints it and tries a browser). */
  onAuthorizeUrl: (url: string) => void;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

function b64url(buf: Buffer): string {
  return buf.toString('base64url');
}

/** Run the browser login; resolves with the provider's ID token. */
export async function browserLogin(o: LoginOptions): Promise<string> {
  const f = o.fetch ?? fetch;
  const discovery = (await (
    await f(`${o.issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`)
  ).json()) as {
    authorization_endpoint?: string;
    token_endpoint?: string;
  };
  if (!discovery.authorization_endpoint || !discovery.token_endpoint) {
    throw new Error(`${o.issuer} publishes no authorization or token endpoint`);
  }
  const verifier = b64url(randomBytes(32));
  const challenge = b64url(createHash('sha256').update(verifier).digest());
  const state = b64url(randomBytes(16));

  const { code, redirectUri } = await new Promise<{ code: string; redirectUri: string }>(
    (resolve, reject) => {
      let redirectUri = '';
      const server = createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        if (url.pathname !== '/callback') {
          res.writeHead(404).end();
          return;
        }
        const done = (err?: Error, code?: string) => {
          res.writeHead(err ? 400 : 200, { 'content-type': 'text/plain' });
          res.end(
            err ? `Login failed: ${err.message}\n` : 'Logged in. You can close this window.\n',
          );
          clearTimeout(timer);
          server.close();
          if (err) reject(err);
          else resolve({ code: code!, redirectUri });
        };
        if (url.searchParams.get('state') !== state) return done(new Error('state mismatch'));
        const error = url.searchParams.get('error');
        if (error) return done(new Error(error));
        const code = url.searchParams.get('code');
        if (!code) return done(new Error('no authorization code'));
        done(undefined, code);
      });
      const timer = setTimeout(
        () => {
          server.close();
          reject(new Error('login timed out'));
        },
        o.timeoutMs ?? 5 * 60_000,
      );
      server.listen(0, '127.0.0.1', () => {
        redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
        const auth = new URL(discovery.authorization_endpoint!);
        auth.search = new URLSearchParams({
          response_type: 'code',
          client_id: o.clientId,
          redirect_uri: redirectUri,
          scope: ['openid', ...(o.scopes ?? [])].join(' '),
          state,
          code_challenge: challenge,
          code_challenge_method: 'S256',
        }).toString();
        o.onAuthorizeUrl(auth.toString());
      });
    },
  );

  const res = await f(discovery.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      client_id: o.clientId,
      code_verifier: verifier,
    }).toString(),
  });
  const body = (await res.json()) as { id_token?: string; error?: string };
  if (!res.ok || !body.id_token)
    throw new Error(`token endpoint refused: ${body.error ?? res.status}`);
  return body.id_token;
}

/**
 * Exchange an OIDC token at Arbor's STS for an API token of `identity`. The audience is
 * the API base address Arbor is configured with (ARBOR_ISSUER_URL); it defaults to `api`.
 */
export async function exchangeAtSts(
  api: string,
  identity: string,
  idToken: string,
  audience: string = api,
  f: typeof fetch = fetch,
): Promise<{ token: string; expiry: string }> {
  const base = api.replace(/\/+$/, '');
  const aud = audience.replace(/\/+$/, '');
  const url = `${base}/sts/exchange?${new URLSearchParams({ aud, identity }).toString()}`;
  const res = await f(url, { headers: { authorization: `Bearer ${idToken}` } });
  const body = (await res.json()) as { token?: string; expiry?: string; message?: string };
  if (!res.ok || !body.token)
    throw new Error(`exchange refused (${res.status}): ${body.message ?? 'no token'}`);
  return { token: body.token, expiry: body.expiry ?? '' };
}
