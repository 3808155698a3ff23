import { createGroup } from './fixtures.js';
import { ISSUER, createRole } from './iam-fixtures.js';
import { freshDatabase, type TestDatabase } from './db.js';
import { startServer, type TestServer } from './server.js';

/**
 * Two Arbor instances over one fresh database (two workers, each with its own grant cache),
 * an organization and a reader role in it: the world the binding-window tests (expireTime,
 * notBefore) share, so that a grant's edge is seen the same on every worker.
 */
export interface TwoWorkers {
  db: TestDatabase;
  a: TestServer;
  b: TestServer;
  org: string;
  reader: string;
  /** A token for identity `uid` signed by worker `s` (subject `sub-<name>`). */
  tokenFor(s: TestServer, uid: string, name: string): Promise<string>;
  close(): Promise<void>;
}

/** `clock`: both workers' authorizers take it for now (default the wall clock). */
export async function startTwoWorkers(
  orgName: string,
  envA: Record<string, string> = {},
  clock: () => number = Date.now,
): Promise<TwoWorkers> {
  const db = await freshDatabase();
  const a = await startServer(envA, { database: db, clock });
  // b shares a's database and must not close it: a does.
  const b = await startServer({}, { database: { ...db, close: () => Promise.resolve() }, clock });
  const org = await createGroup(a.admin, orgName);
  const reader = await createRole(a.admin, org, 'reader', ['groups.list', 'repo.list']);
  return {
    db,
    a,
    b,
    org,
    reader,
    tokenFor: async (s, uid, name) =>
      (await s.arbor.tokens.sign(uid, { iss: ISSUER, sub: `sub-${name}` })).token,
    close: async () => {
      await b.close();
      await a.close();
    },
  };
}

/** Resolves once the wall clock has reached `at` (a condition, not a guess at a delay). */
export async function untilWallClock(at: number): Promise<void> {
  while (Date.now() < at) await new Promise((r) => setTimeout(r, Math.min(20, at - Date.now())));
}
