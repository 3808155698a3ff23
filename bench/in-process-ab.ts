import { pino } from 'pino';
import type { Principal } from '../src/auth/principal.js';
import { compose, type Arbor } from '../src/compose.js';
import { loadConfig } from '../src/config.js';
import { parseListRequest } from '../src/core/list-request.js';
import type { Database } from '../src/db/connect.js';
import { ROLE_LIST } from '../src/resources/roles/role.js';

/**
 * What the in-process on/off benches (budgets-bench.ts, last-used-bench.ts) share: Arbors
 * composed over one database that differ only in the setting measured, a caller bound where
 * it calls, and closed loops at the service with a fresh principal per call.
 */

const ADMIN = 'bench-admin-token-0123456789abcdef';

/** One Arbor over `db` with `env` (the setting under test) on top of a quiet base. */
export function arborOf(db: Database, dir: string, env: Record<string, string>): Promise<Arbor> {
  const config = loadConfig({ ARBOR_ADMIN_TOKEN: ADMIN, DATA_DIR: dir, LOG_LEVEL: 'warn', ...env });
  return compose(config, { database: db, logger: pino({ level: 'warn' }), audit: false });
}

/** An org (`<prefix>-<now>`), a group in it, and `name`, an identity bound as viewer there. */
export async function seedViewer(
  a: Arbor,
  prefix: string,
  name: string,
): Promise<{ identity: string; group: string }> {
  const admin: Principal = { kind: 'admin' };
  const s = a.services;
  const org = await s.groups.create(admin, undefined, { name: `${prefix}-${Date.now()}` });
  const group = (await s.groups.create(admin, org.uid, { name: 'team' })).uid;
  const identity = (
    await s.identities.create(admin, group, {
      name,
      claimMatch: { issuer: 'https://bench.invalid', subject: name },
    })
  ).uid;
  const roles = await s.roles.list(admin, parseListRequest({ name: 'viewer' }, ROLE_LIST));
  const viewer = roles.items.find((r) => !r.uid.includes('/'))!.uid;
  await s.roleBindings.create(admin, group, { identityUid: identity, roleUid: viewer });
  return { identity, group };
}

/**
 * Calls per second of `concurrency` closed loops for `seconds`, each call made as `who`
 * with a fresh principal (as every request has one).
 */
export async function callsPerSecond(
  who: string,
  seconds: number,
  concurrency: number,
  call: (p: Principal) => Promise<unknown>,
): Promise<number> {
  const until = Date.now() + seconds * 1000;
  let n = 0;
  const loop = async () => {
    while (Date.now() < until) {
      await call(Object.freeze({ kind: 'identity', uid: who }));
      n++;
    }
  };
  const t0 = Date.now();
  await Promise.all(Array.from({ length: concurrency }, loop));
  return (n * 1000) / (Date.now() - t0);
}
