/**
 * `npm run bench -- --only=last-used [--seconds=5] [--rounds=6] [--concurrency=32]`: what
 * recording last use costs the access check, on and off in the same run. Two
 * Arbors are composed in this process over one database (PostgreSQL at LAST_USED_PG_URL,
 * with its read caches, where a self check is answered from memory and the recording is the
 * largest share of its cost; else embedded PGlite), one with ARBOR_LAST_USED=false; rounds
 * alternate on, off, on, off… so a busy moment slows both alike, and the medians of their
 * checks per second are compared (the target: on ≥ 97 % of off).
 *
 * The check is called at the service (`AccessService.check`, with a fresh principal per call
 * as every request has), without HTTP: the transport costs both alike, so this is the
 * larger, more conservative share. The flush runs as `arbor serve` runs it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Principal } from '../src/auth/principal.js';
import { compose, type Arbor } from '../src/compose.js';
import { loadConfig } from '../src/config.js';
import { parseListRequest } from '../src/core/list-request.js';
import { ROLE_LIST } from '../src/resources/roles/role.js';
import { openDatabase, type Database } from '../src/db/connect.js';
import { median } from './load.js';

const ADMIN = 'bench-admin-token-0123456789abcdef';

interface Options {
  seconds: number;
  rounds: number;
  concurrency: number;
  log?: (m: string) => void;
}

/** One Arbor, on or off, over `db`; an org, a group, an identity bound as viewer there. */
async function arborOf(db: Database, on: boolean, dir: string): Promise<Arbor> {
  const config = loadConfig({
    ARBOR_ADMIN_TOKEN: ADMIN,
    DATA_DIR: dir,
    ARBOR_LAST_USED: String(on),
    LOG_LEVEL: 'warn',
  });
  return compose(config, { database: db, logger: pino({ level: 'warn' }), audit: false });
}

async function seed(a: Arbor): Promise<{ identity: string; group: string }> {
  const admin: Principal = { kind: 'admin' };
  const s = a.services;
  const org = await s.groups.create(admin, undefined, { name: `lu-${Date.now()}` });
  const group = (await s.groups.create(admin, org.uid, { name: 'team' })).uid;
  const identity = (
    await s.identities.create(admin, group, {
      name: 'checker',
      claimMatch: { issuer: 'https://bench.invalid', subject: 'checker' },
    })
  ).uid;
  const roles = await s.roles.list(admin, parseListRequest({ name: 'viewer' }, ROLE_LIST));
  const viewer = roles.items.find((r) => !r.uid.includes('/'))!.uid;
  await s.roleBindings.create(admin, group, { identityUid: identity, roleUid: viewer });
  return { identity, group };
}

/** Checks per second of `concurrency` closed loops for `seconds`. */
async function round(a: Arbor, who: string, group: string, o: Options): Promise<number> {
  const body = { capability: 'groups.list', groupUid: group };
  const until = Date.now() + o.seconds * 1000;
  let n = 0;
  const loop = async () => {
    while (Date.now() < until) {
      const p: Principal = Object.freeze({ kind: 'identity', uid: who });
      const r = await a.services.access.check(p, body);
      if (!r.allowed) throw new Error('the bench identity was denied');
      n++;
    }
  };
  const t0 = Date.now();
  await Promise.all(Array.from({ length: o.concurrency }, loop));
  return (n * 1000) / (Date.now() - t0);
}

/** @returns the median checks per second, recording on and off, and their ratio. */
export async function benchLastUsed(o: Options): Promise<{ on: number; off: number }> {
  const log = o.log ?? console.log;
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-lu-'));
  const url = process.env.LAST_USED_PG_URL;
  const db = await openDatabase(url ? { url, dataDir: '' } : { dataDir: 'memory://' });
  const on = await arborOf(db, true, dir);
  const off = await arborOf(db, false, dir);
  try {
    const { identity, group } = await seed(on);
    on.usage!.flusher.start();
    const rates: { on: number[]; off: number[] } = { on: [], off: [] };
    // A warm-up round each (caches, JIT), not counted.
    await round(on, identity, group, { ...o, seconds: Math.min(o.seconds, 2) });
    await round(off, identity, group, { ...o, seconds: Math.min(o.seconds, 2) });
    for (let i = 0; i < o.rounds; i++) {
      const [first, second] = i % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
      for (const which of [first, second]) {
        const r = await round(which === 'on' ? on : off, identity, group, o);
        rates[which].push(r);
        log(`round ${i + 1} ${which.padEnd(3)} ${r.toFixed(0)} checks/s`);
      }
    }
    const result = { on: median(rates.on), off: median(rates.off) };
    // Both must have been answered the same way (from the read caches on PostgreSQL).
    for (const [name, a] of [
      ['on', on],
      ['off', off],
    ] as const)
      log(`${name} read caches: ${JSON.stringify(a.readCaches)}`);
    log(
      `last used on: ${result.on.toFixed(0)}/s, off: ${result.off.toFixed(0)}/s, ` +
        `on/off ${((100 * result.on) / result.off).toFixed(1)} % (${db.kind}, ` +
        `${o.rounds} rounds of ${o.seconds} s, concurrency ${o.concurrency})`,
    );
    return result;
  } finally {
    await on.usage?.flusher.stop();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
