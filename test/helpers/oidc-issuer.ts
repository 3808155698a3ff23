import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { webcrypto } from 'node:crypto';

interface Key {
  kid: string;
  alg: string;
  privateKey: webcrypto.CryptoKey;
  publicJwk: JWK;
}

/**
 * A real OIDC issuer on loopback: discovery and JWKS over HTTP, keys it can rotate, and
 * a counter of every request it served (to prove when Arbor did or did not call it).
 */
export class TestIssuer {
  url = '';
  requests = 0;
  up = true;
  private server: Server | undefined;
  private keys: Key[] = [];

  static async start(alg: 'RS256' | 'ES256' = 'RS256'): Promise<TestIssuer> {
    const issuer = new TestIssuer();
    await issuer.addKey(alg);
    issuer.server = createServer((req, res) => {
      issuer.requests++;
      if (!issuer.up) {
        res.writeHead(503).end();
        return;
      }
      if (req.url === '/.well-known/openid-configuration') {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            issuer: issuer.url,
            jwks_uri: `${issuer.url}/keys`,
            authorization_endpoint: `${issuer.url}/authorize`,
            token_endpoint: `${issuer.url}/token`,
          }),
        );
      } else if (req.url?.startsWith('/authorize')) {
        issuer.authorize(req.url, res);
      } else if (req.url === '/token' && req.method === 'POST') {
        void issuer.token(req, res);
      } else if (req.url === '/keys') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ keys: issuer.keys.map((k) => k.publicJwk) }));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((r) => issuer.server!.listen(0, '127.0.0.1', () => r()));
    issuer.url = `http://127.0.0.1:${(issuer.server.address() as AddressInfo).port}`;
    return issuer;
  }

  /** Who logs in at /authorize (a user who always says yes), and the audience of the ID token. */
  loginSubject = 'alice';
  loginAudience = '';
  private codes = new Map<string, { challenge: string; redirect: string; clientId: string }>();

  private authorize(path: string, res: ServerResponse): void {
    const q = new URL(path, this.url).searchParams;
    const code = Math.random().toString(36).slice(2);
    this.codes.set(code, {
      challenge: q.get('code_challenge') ?? '',
      redirect: q.get('redirect_uri') ?? '',
      clientId: q.get('client_id') ?? '',
    });
    const back = new URL(q.get('redirect_uri') ?? '');
    back.searchParams.set('code', code);
    back.searchParams.set('state', q.get('state') ?? '');
    res.writeHead(302, { location: back.toString() }).end();
  }

  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const c of req as AsyncIterable<Buffer>) body += c.toString();
    const form = new URLSearchParams(body);
    const grant = this.codes.get(form.get('code') ?? '');
    const expected = createHash('sha256')
      .update(form.get('code_verifier') ?? '')
      .digest('base64url');
    res.setHeader('content-type', 'application/json');
    if (!grant || grant.challenge !== expected || grant.redirect !== form.get('redirect_uri')) {
      res.writeHead(400).end(JSON.stringify({ error: 'invalid_grant' }));
      return;
    }
    this.codes.delete(form.get('code') ?? '');
    const idToken = await this.mint({
      sub: this.loginSubject,
      aud: this.loginAudience || grant.clientId,
    });
    res.end(JSON.stringify({ id_token: idToken, token_type: 'Bearer' }));
  }

  /** Add a signing key; the newest signs from now on (a rotation). */
  async addKey(alg: 'RS256' | 'ES256' = 'RS256'): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    const kid = `k${this.keys.length + 1}-${Math.random().toString(36).slice(2, 8)}`;
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
    this.keys.unshift({ kid, alg, privateKey, publicJwk });
    return kid;
  }

  jwks(): { keys: JWK[] } {
    return { keys: this.keys.map((k) => k.publicJwk) };
  }

  /** A signed token; claims default to a one-hour token from this issuer. */
  async mint(
    claims: Record<string, unknown>,
    opts: { kid?: string; omit?: string[]; iat?: number; exp?: number; key?: Key } = {},
  ): Promise<string> {
    const key = opts.key ?? this.keys[0]!;
    const now = Math.floor(Date.now() / 1000);
    const body: Record<string, unknown> = {
      iss: this.url,
      iat: opts.iat ?? now,
      exp: opts.exp ?? now + 3600,
      ...claims,
    };
    for (const k of opts.omit ?? []) delete body[k];
    return new SignJWT(body)
      .setProtectedHeader({ alg: key.alg, kid: opts.kid ?? key.kid, typ: 'JWT' })
      .sign(key.privateKey);
  }

  /** A key this issuer does not publish, for forged-signature cases. */
  static async strayKey(alg: 'RS256' | 'ES256' = 'RS256'): Promise<Key> {
    const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
    return { kid: 'stray', alg, privateKey, publicJwk: await exportJWK(publicKey) };
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/** base64url of a JSON value: for hand-built (unsigned or HMAC) tokens. */
export function b64json(v: unknown): string {
  return Buffer.from(JSON.stringify(v)).toString('base64url');
}
