import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { webcrypto } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type JWK } from 'jose';

interface Grant {
  clientId: string;
  redirect: string;
  challenge: string;
  nonce: string;
  sub: string;
}

/**
 * A loopback OIDC provider for sign-in tests: discovery, JWKS, an authorize endpoint that
 * signs `person` in without asking (a test drives it with an HTTP client), and a token
 * endpoint for authorization codes (PKCE S256 checked, nonce echoed) and refresh tokens.
 */
export class LoginIssuer {
  url = '';
  /** Who the authorize endpoint signs in. */
  person = { sub: 'alice', email: 'alice@example.com', name: 'Alice' };
  /** Refresh tokens the provider still honours; clear it to end every session. */
  readonly refreshTokens = new Map<string, { clientId: string; sub: string }>();
  tokenRequests = 0;
  private server: Server | undefined;
  private key!: { kid: string; privateKey: webcrypto.CryptoKey; publicJwk: JWK };
  private readonly codes = new Map<string, Grant>();

  static async start(): Promise<LoginIssuer> {
    const issuer = new LoginIssuer();
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = `login-${randomBytes(4).toString('hex')}`;
    issuer.key = {
      kid,
      privateKey,
      publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' },
    };
    issuer.server = createServer((req, res) => void issuer.handle(req, res));
    await new Promise<void>((r) => issuer.server!.listen(0, '127.0.0.1', () => r()));
    issuer.url = `http://127.0.0.1:${(issuer.server.address() as AddressInfo).port}`;
    return issuer;
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    // Readable from any origin, as a real provider's discovery and token endpoints are for
    // a browser client (the web console's PKCE sign-in); no credentials are involved.
    res
      .writeHead(status, { 'content-type': 'application/json', 'access-control-allow-origin': '*' })
      .end(JSON.stringify(body));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    if (url.pathname === '/.well-known/openid-configuration') {
      return this.json(res, 200, {
        issuer: this.url,
        authorization_endpoint: `${this.url}/authorize`,
        token_endpoint: `${this.url}/token`,
        jwks_uri: `${this.url}/keys`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        id_token_signing_alg_values_supported: ['ES256'],
        token_endpoint_auth_methods_supported: ['none'],
        subject_types_supported: ['public'],
      });
    }
    if (url.pathname === '/keys') return this.json(res, 200, { keys: [this.key.publicJwk] });
    if (url.pathname === '/authorize') return this.authorize(url, res);
    if (url.pathname === '/token' && req.method === 'POST') return this.token(req, res);
    res.writeHead(404).end();
  }

  private authorize(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    if (q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256') {
      return this.json(res, 400, { error: 'invalid_request' });
    }
    const code = randomBytes(16).toString('hex');
    this.codes.set(code, {
      clientId: q.get('client_id') ?? '',
      redirect: q.get('redirect_uri') ?? '',
      challenge: q.get('code_challenge') ?? '',
      nonce: q.get('nonce') ?? '',
      sub: this.person.sub,
    });
    const back = new URL(q.get('redirect_uri') ?? '');
    back.searchParams.set('code', code);
    back.searchParams.set('state', q.get('state') ?? '');
    back.searchParams.set('iss', this.url);
    res.writeHead(302, { location: back.toString() }).end();
  }

  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.tokenRequests++;
    let body = '';
    for await (const c of req as AsyncIterable<Buffer>) body += c.toString();
    const form = new URLSearchParams(body);
    const clientId = form.get('client_id') ?? '';
    if (form.get('grant_type') === 'authorization_code') {
      const grant = this.codes.get(form.get('code') ?? '');
      this.codes.delete(form.get('code') ?? '');
      const proof = createHash('sha256')
        .update(form.get('code_verifier') ?? '')
        .digest('base64url');
      if (
        !grant ||
        grant.challenge !== proof ||
        grant.redirect !== form.get('redirect_uri') ||
        grant.clientId !== clientId
      ) {
        return this.json(res, 400, { error: 'invalid_grant' });
      }
      return this.json(res, 200, await this.tokens(clientId, grant.sub, grant.nonce));
    }
    if (form.get('grant_type') === 'refresh_token') {
      const held = this.refreshTokens.get(form.get('refresh_token') ?? '');
      this.refreshTokens.delete(form.get('refresh_token') ?? '');
      if (!held || held.clientId !== clientId)
        return this.json(res, 400, { error: 'invalid_grant' });
      return this.json(res, 200, await this.tokens(clientId, held.sub, undefined));
    }
    this.json(res, 400, { error: 'unsupported_grant_type' });
  }

  private async tokens(clientId: string, sub: string, nonce: string | undefined) {
    const now = Math.floor(Date.now() / 1000);
    const idToken = await new SignJWT({
      email: this.person.email,
      name: this.person.name,
      ...(nonce ? { nonce } : {}),
    })
      .setProtectedHeader({ alg: 'ES256', kid: this.key.kid, typ: 'JWT' })
      .setIssuer(this.url)
      .setSubject(sub)
      .setAudience(clientId)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(this.key.privateKey);
    const refresh = randomBytes(24).toString('base64url');
    this.refreshTokens.set(refresh, { clientId, sub });
    return {
      access_token: randomBytes(16).toString('hex'),
      token_type: 'Bearer',
      expires_in: 600,
      id_token: idToken,
      refresh_token: refresh,
    };
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
