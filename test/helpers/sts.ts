import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionContext } from 'ava';
import { b64json, type TestIssuer } from './oidc-issuer.js';
import type { Reply, TestServer } from './server.js';

/** Exchange `token` at the STS; `query` defaults to the API audience and `identity`. */
export function exchangeAt(
  s: TestServer,
  token: string,
  query: Record<string, string>,
): Promise<Reply> {
  return s.client(token).get(`/sts/exchange?${new URLSearchParams(query).toString()}`);
}

/**
 * Every refusal of the STS: the HTTP status, a typed google.rpc.Status (code, message,
 * ErrorInfo first), and no token anywhere in the answer.
 */
export function assertRefused(
  t: ExecutionContext,
  res: Reply,
  status: number,
  code: number,
  label = '',
): void {
  t.is(res.status, status, `${label} ${JSON.stringify(res.body)}`);
  t.is(res.body?.code, code, label);
  t.is(typeof res.body?.message, 'string', label);
  t.is(res.body?.details?.[0]?.['@type'], 'type.googleapis.com/google.rpc.ErrorInfo', label);
  t.is(res.body?.details?.[0]?.domain, 'iam.arbor.dev', label);
  t.false(typeof res.body === 'object' && res.body !== null && 'token' in res.body, label);
}

/**
 * A token that names `iss` and claims RS256 but is signed by nobody: what anyone can send
 * before any signature has been checked.
 */
export function unsignedToken(claims: Record<string, unknown>): string {
  const now = Math.floor(Date.now() / 1000);
  const head = b64json({ alg: 'RS256', kid: 'k', typ: 'JWT' });
  const body = b64json({ iat: now, exp: now + 600, ...claims });
  return `${head}.${body}.${Buffer.from('not a signature').toString('base64url')}`;
}

/**
 * An HTTP server on loopback that counts every TCP connection and request, and answers
 * what `handler` says (default: 404). For proving that Arbor did, or did not, call out.
 */
export class CountingServer {
  connections = 0;
  requests = 0;
  url = '';
  private server: Server | undefined;

  static async start(
    handler: (path: string, self: CountingServer) => { status: number; body: string } = () => ({
      status: 404,
      body: '',
    }),
    host = '127.0.0.1',
  ): Promise<CountingServer> {
    const c = new CountingServer();
    c.server = createServer((req, res) => {
      c.requests++;
      const { status, body } = handler(req.url ?? '/', c);
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
    c.server.on('connection', () => c.connections++);
    await new Promise<void>((r) => c.server!.listen(0, host, () => r()));
    const port = (c.server.address() as AddressInfo).port;
    c.url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    return c;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/**
 * An attacker's OIDC issuer on loopback: whatever path discovery is asked for, it answers
 * that the issuer is exactly the URL asked about, and publishes `keys`' key set, so any
 * `iss` on this host verifies with the attacker's own signature.
 */
export function startAttackerIssuer(keys: TestIssuer): Promise<CountingServer> {
  const suffix = '/.well-known/openid-configuration';
  return CountingServer.start((path, self) => {
    if (path === '/keys') return { status: 200, body: JSON.stringify(keys.jwks()) };
    if (!path.endsWith(suffix)) return { status: 404, body: '' };
    const issuer = `${self.url}${path.slice(0, -suffix.length)}`;
    return { status: 200, body: JSON.stringify({ issuer, jwks_uri: `${self.url}/keys` }) };
  });
}
