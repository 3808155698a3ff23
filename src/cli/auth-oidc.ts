import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';

/**
 * A person's sign-in at an OIDC provider with `openid-client`: discovery (issuer checked),
 * authorization code + PKCE (S256) + state + nonce, ID-token claim checks (iss, aud, exp,
 * nonce), and refresh. No client secret: the CLI is a public client (RFC 8252).
 */
export interface OidcClientOptions {
  issuer: string;
  clientId: string;
  scopes?: string[];
}

export interface SignedIn {
  idToken: string;
  refreshToken?: string;
  claims: { sub: string; email?: string; name?: string };
}

export interface LoginIo {
  /** Called with the address the person opens (printed; a browser is tried unless headless). */
  onAuthorizeUrl(url: string): void;
  /** Headless: the address the browser was sent back to, pasted by the person. */
  readRedirect?(): Promise<string>;
  timeoutMs?: number;
}

/** The redirect a headless login names: nothing listens there; the person copies it back. */
export const HEADLESS_REDIRECT = 'http://127.0.0.1/callback';

async function configure(o: OidcClientOptions): Promise<client.Configuration> {
  const url = new URL(o.issuer);
  // Plain http only for a provider on this machine (development and tests).
  const local =
    url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  return client.discovery(url, o.clientId, undefined, client.None(), {
    ...(local ? { execute: [client.allowInsecureRequests] } : {}),
    timeout: 30,
  });
}

function result(
  tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers,
): SignedIn {
  const claims = tokens.claims();
  if (!tokens.id_token || !claims) throw new Error('the provider returned no ID token');
  return {
    idToken: tokens.id_token,
    ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}),
    claims: {
      sub: claims.sub,
      ...(typeof claims.email === 'string' ? { email: claims.email } : {}),
      ...(typeof claims.name === 'string' ? { name: claims.name } : {}),
    },
  };
}

/**
 * Sign in: with `io.readRedirect` (headless) the person pastes the address they were sent
 * back to; otherwise a loopback server on 127.0.0.1 receives the redirect.
 * @throws Error for a refused, forged (state/nonce) or timed-out login.
 */
export async function oidcSignIn(o: OidcClientOptions, io: LoginIo): Promise<SignedIn> {
  const config = await configure(o);
  const verifier = client.randomPKCECodeVerifier();
  const challenge = await client.calculatePKCECodeChallenge(verifier);
  const state = client.randomState();
  const nonce = client.randomNonce();
  const authorizeUrl = (redirectUri: string) =>
    client
      .buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: ['openid', 'email', 'profile', 'offline_access', ...(o.scopes ?? [])].join(' '),
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state,
        nonce,
      })
      .toString();
  const grant = async (currentUrl: URL) =>
    result(
      await client.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
        idTokenExpected: true,
      }),
    );

  if (io.readRedirect) {
    io.onAuthorizeUrl(authorizeUrl(HEADLESS_REDIRECT));
    const pasted = (await io.readRedirect()).trim();
    let url: URL;
    try {
      url = new URL(pasted);
    } catch {
      throw new Error(
        'paste the whole address the browser ended on (it starts with http://127.0.0.1/callback)',
      );
    }
    return grant(url);
  }

  return new Promise<SignedIn>((resolve, reject) => {
    const server = createServer((req, res) => {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const url = new URL(req.url ?? '/', base);
      if (url.pathname !== '/callback') {
        res.writeHead(404).end();
        return;
      }
      grant(url).then(
        (done) => {
          res
            .writeHead(200, { 'content-type': 'text/plain' })
            .end('Signed in. You can close this window.\n');
          finish(undefined, done);
        },
        (e: unknown) => {
          res.writeHead(400, { 'content-type': 'text/plain' }).end('Sign-in failed.\n');
          finish(e instanceof Error ? e : new Error(String(e)));
        },
      );
    });
    const timer = setTimeout(
      () => finish(new Error('login timed out')),
      io.timeoutMs ?? 5 * 60_000,
    );
    function finish(err: Error | undefined, done?: SignedIn) {
      clearTimeout(timer);
      server.close();
      server.closeAllConnections();
      if (err) reject(err);
      else resolve(done!);
    }
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      io.onAuthorizeUrl(authorizeUrl(`http://127.0.0.1:${port}/callback`));
    });
  });
}

/** A fresh ID token from a refresh token. @throws Error when the provider refuses it. */
export async function oidcRefresh(o: OidcClientOptions, refreshToken: string): Promise<SignedIn> {
  const config = await configure(o);
  const tokens = await client.refreshTokenGrant(config, refreshToken);
  const out = result(tokens);
  return out.refreshToken ? out : { ...out, refreshToken };
}
