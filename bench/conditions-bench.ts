/**
 * `npm run bench -- --only=conditions [--seconds=3] [--rounds=4] [--concurrency=16]`: what a
 * condition costs a decision. One Arbor in this process (PostgreSQL at CONDITIONS_PG_URL,
 * else embedded PGlite), two identities bound as viewer at one group: one plainly, one by a
 * conditional binding (a time window and a group path prefix, both true). The same two
 * decisions are measured for each, in alternating rounds so that a busy moment slows both
 * alike: the access check (the caller about itself) and a group Get as the REST door makes
 * it (the principal carries `via: rest`, so the authorizer evaluates the condition). The
 * medians are compared: conditional/plain in time per call (the target: ≤ 1.3×).
 *
 * Called at the service, without HTTP: the transport costs both alike, so this is the larger,
 * more conservative share of the difference.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withVia, type Principal } from '../src/auth/principal.js';
import type { Arbor } from '../src/compose.js';
import { parseListRequest } from '../src/core/list-request.js';
import { openDatabase } from '../src/db/connect.js';
import { ROLE_LIST } from '../src/resources/roles/role.js';
import { arborOf, callsPerSecond, seedViewer } from './in-process-ab.js';
import { median } from './load.js';

interface Options {
  seconds: number;
  rounds: number;
  concurrency: number;
  log?: (m: string) => void;
}

type Decision = 'check' | 'get';
type Binding = 'plain' | 'conditional';

/** Calls per second of one decision as `who`; a denial stops the bench (it must grant). */
function round(a: Arbor, who: string, group: string, d: Decision, o: Options): Promise<number> {
  const body = { capability: 'groups.list', groupUid: group };
  const call =
    d === 'check'
      ? async (p: Principal) => {
          if (!(await a.services.access.check(p, body)).allowed)
            throw new Error(`${who} was denied the check`);
        }
      : (p: Principal) => a.services.groups.get(withVia(p, { door: 'rest' }), group);
  return callsPerSecond(who, o.seconds, o.concurrency, call);
}

/** @returns the median calls per second of each decision by each binding. */
export async function benchConditions(
  o: Options,
): Promise<Record<Decision, Record<Binding, number>>> {
  const log = o.log ?? console.log;
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-cond-'));
  const url = process.env.CONDITIONS_PG_URL;
  const db = await openDatabase(url ? { url, dataDir: '' } : { dataDir: 'memory://' });
  const a = await arborOf(db, dir, {});
  try {
    const plain = await seedViewer(a, 'cond', 'plain');
    const admin: Principal = { kind: 'admin' };
    const org = (await a.services.groups.get(admin, plain.group.split('/')[0]!)).name;
    const identity = (
      await a.services.identities.create(admin, plain.group, {
        name: 'conditional',
        claimMatch: { issuer: 'https://bench.invalid', subject: 'conditional' },
      })
    ).uid;
    // The viewer role, as seedViewer bound it (the built-in one: its uid has no group).
    const roles = await a.services.roles.list(
      admin,
      parseListRequest({ name: 'viewer' }, ROLE_LIST),
    );
    const roleUid = roles.items.find((r) => !r.uid.includes('/'))!.uid;
    await a.services.roleBindings.create(admin, plain.group, {
      identityUid: identity,
      roleUid,
      condition: {
        expression: `request.time < timestamp("2100-01-01T00:00:00Z") && resource.group.path.startsWith("${org}/")`,
      },
    });
    const who: Record<Binding, string> = { plain: plain.identity, conditional: identity };
    const rates: Record<Decision, Record<Binding, number[]>> = {
      check: { plain: [], conditional: [] },
      get: { plain: [], conditional: [] },
    };
    for (const d of ['check', 'get'] as const) {
      // A warm-up round each (caches, JIT, the compiled condition), not counted.
      const warm = { ...o, seconds: Math.min(o.seconds, 1) };
      await round(a, who.plain, plain.group, d, warm);
      await round(a, who.conditional, plain.group, d, warm);
      for (let i = 0; i < o.rounds; i++) {
        const order: Binding[] = i % 2 === 0 ? ['plain', 'conditional'] : ['conditional', 'plain'];
        for (const b of order) {
          const r = await round(a, who[b], plain.group, d, o);
          rates[d][b].push(r);
          log(`${d} round ${i + 1} ${b.padEnd(11)} ${r.toFixed(0)}/s`);
        }
      }
    }
    const result = {
      check: { plain: median(rates.check.plain), conditional: median(rates.check.conditional) },
      get: { plain: median(rates.get.plain), conditional: median(rates.get.conditional) },
    };
    for (const d of ['check', 'get'] as const)
      log(
        `${d}: plain ${result[d].plain.toFixed(0)}/s, conditional ` +
          `${result[d].conditional.toFixed(0)}/s, conditional/plain in time per call ` +
          `${(result[d].plain / result[d].conditional).toFixed(2)}× (target ≤ 1.3×; ${db.kind}, ` +
          `${o.rounds} rounds of ${o.seconds} s, concurrency ${o.concurrency})`,
      );
    return result;
  } finally {
    await a.close();
    await db.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
