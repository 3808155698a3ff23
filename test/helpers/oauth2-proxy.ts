import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './process.js';

/**
 * OAuth2 Proxy as a real gateway in front of a small upstream: it accepts a request only
 * with a bearer JWT it verifies against an issuer's discovery document and JWKS, for one
 * audience (`--skip-jwt-bearer-tokens`, `--extra-jwt-issuers=<issuer>=<audience>`). The
 * binary comes from scripts/oauth2-proxy/build.sh (.ci/tools.sh).
 */
const VERSION = 'v7.15.6';

export const OAUTH2_PROXY_BINARY =
  process.env.ARBOR_OAUTH2_PROXY ??
  join(
    process.env.ARBOR_CACHE ?? join(homedir(), '.cache', 'arbor'),
    'oauth2-proxy',
    VERSION,
    'oauth2-proxy',
  );

/** Why OAuth2 Proxy cannot run here, or undefined (for needTool). */
export function oauth2ProxyMissing(): string | undefined {
  return existsSync(OAUTH2_PROXY_BINARY)
    ? undefined
    : `no ${OAUTH2_PROXY_BINARY} (run scripts/oauth2-proxy/build.sh)`;
}

/** A request the upstream received (only what the tests read). */
export interface SeenRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

/** The upstream behind the gateway: answers 200 `upstream` and records every request. */
export interface Upstream {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

export async function startUpstream(): Promise<Upstream> {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    res.writeHead(200, { 'content-type': 'text/plain' }).end('upstream');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export interface OAuth2Proxy {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  logs(): string;
  stop(): Promise<void>;
}

/**
 * OAuth2 Proxy on a free loopback port in front of `upstream`, accepting bearer JWTs of
 * `issuer` for `audience` only, resolved once its /ping answers. No browser sign-in is
 * ever used: the provider's client is a placeholder, and a request without a valid bearer
 * token is refused.
 */
export async function startOAuth2Proxy(o: {
  issuer: string;
  audience: string;
  upstream: string;
}): Promise<OAuth2Proxy> {
  const port = await freePort();
  const child = spawn(
    OAUTH2_PROXY_BINARY,
    [
      `--http-address=127.0.0.1:${port}`,
      `--upstream=${o.upstream}/`,
      '--skip-jwt-bearer-tokens=true',
      `--extra-jwt-issuers=${o.issuer}=${o.audience}`,
      // Who the token names is the identity's uid, not a mailbox: any "email" will do.
      '--email-domain=*',
      // The browser flow's client: required by the configuration, never used here.
      '--client-id=unused-browser-client',
      '--client-secret=unused-browser-client-secret',
      `--cookie-secret=${randomBytes(16).toString('hex')}`,
      '--cookie-secure=false',
      `--redirect-url=http://127.0.0.1:${port}/oauth2/callback`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let logs = '';
  child.stdout!.on('data', (d: Buffer) => (logs += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (logs += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const up = await fetch(`${url}/ping`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`oauth2-proxy did not start\n${logs}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    logs: () => logs.slice(-4000),
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
