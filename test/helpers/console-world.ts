import { rmSync } from 'node:fs';
import { openDatabase } from '../../src/db/connect.js';
import { buildConsole } from './browser.js';
import { TestIssuer } from './oidc-issuer.js';
import { startServer, type TestServer } from './server.js';

/**
 * A real Arbor (HTTP on a loopback port, embedded PGlite) serving a freshly built console,
 * and a workload OIDC issuer whose tokens the STS turns into API tokens of test identities.
 */
export interface ConsoleWorld {
  s: TestServer;
  issuer: TestIssuer;
  /** An API token of `identityUid`, whose claimMatch is this issuer and `subject`. */
  tokenFor(identityUid: string, subject: string): Promise<string>;
  close(): Promise<void>;
}

export async function startConsoleWorld(env: Record<string, string> = {}): Promise<ConsoleWorld> {
  const dir = buildConsole();
  const database = await openDatabase({ dataDir: 'memory://' });
  const s = await startServer(
    { ARBOR_CONSOLE_DIR: dir, ARBOR_ALLOW_INSECURE_ISSUERS: 'true', ...env },
    { database },
  );
  const issuer = await TestIssuer.start();
  return {
    s,
    issuer,
    tokenFor: async (identityUid, subject) => {
      const aud = s.arbor.config.issuerUrl;
      const upstream = await issuer.mint({ sub: subject, aud });
      const q = new URLSearchParams({ aud, identity: identityUid });
      const res = await s.client(upstream).get(`/sts/exchange?${q.toString()}`);
      if (res.status !== 200) throw new Error(`exchange: ${JSON.stringify(res.body)}`);
      return res.body.token as string;
    },
    close: async () => {
      await issuer.stop();
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
