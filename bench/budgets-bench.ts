/**
 * `npm run bench -- --only=budgets [--seconds=3] [--rounds=4] [--concurrency=16]`: what the
 * cost budgets (docs/operations.md, "Budgets") cost, on and off in the same run. Two Arbors
 * are composed in this process over one database (PostgreSQL at BUDGETS_PG_URL, else
 * embedded PGlite), one with ARBOR_BUDGETS=off; rounds alternate on, off, off, on… so a busy
 * moment slows both alike, and the medians of their calls per second are compared.
 *
 * Three calls, at the service as every door makes them, with a fresh principal per call:
 * the Get and the access check, which spend no budget (the budget replaces only the
 * methods of its table, so theirs are the very same functions on and off: the ratio should
 * be noise), and who-can, which spends one point of two budgets per call (two upserts),
 * with its budget raised so that the bench is never refused: the limiter's own cost.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Principal } from '../src/auth/principal.js';
import type { Arbor } from '../src/compose.js';
import { parseListRequest } from '../src/core/list-request.js';
import { WHO_CAN_LIST } from '../src/resources/access/access.js';
import { openDatabase } from '../src/db/connect.js';
import { arborOf, callsPerSecond, seedViewer } from './in-process-ab.js';
import { median } from './load.js';

interface Options {
  seconds: number;
  rounds: number;
  concurrency: number;
  log?: (m: string) => void;
}

const CALLS = ['get', 'check', 'who-can'] as const;
type Call = (typeof CALLS)[number];

function callOf(a: Arbor, call: Call, group: string): (p: Principal) => Promise<unknown> {
  const s = a.services;
  switch (call) {
    case 'get':
      return (p) => s.groups.get(p, group);
    case 'check':
      return (p) => s.access.check(p, { capability: 'groups.list', groupUid: group });
    case 'who-can':
      return (p) =>
        s.access.whoCan(p, parseListRequest({ group, capability: 'groups.list' }, WHO_CAN_LIST));
  }
}

/** Calls per second of `concurrency` closed loops for `seconds`. */
function round(a: Arbor, call: Call, who: string, group: string, o: Options) {
  return callsPerSecond(who, o.seconds, o.concurrency, callOf(a, call, group));
}

/** @returns per call, the median calls per second with the budgets on and off. */
export async function benchBudgets(o: Options): Promise<Record<Call, { on: number; off: number }>> {
  const log = o.log ?? console.log;
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-budgets-'));
  const url = process.env.BUDGETS_PG_URL;
  const db = await openDatabase(url ? { url, dataDir: '' } : { dataDir: 'memory://' });
  // Never refused here: the bench measures what spending costs, not what refusing saves.
  const budgets = (on: boolean) =>
    arborOf(db, dir, {
      ARBOR_BUDGETS: on ? 'on' : 'off',
      ARBOR_BUDGET_ACCESS_QUERY: '100000000/3600',
      ARBOR_BUDGET_ACCESS_QUERY_ORG: '100000000/3600',
    });
  const on = await budgets(true);
  const off = await budgets(false);
  const result = {} as Record<Call, { on: number; off: number }>;
  try {
    const { identity, group } = await seedViewer(on, 'budget', 'caller');
    for (const call of CALLS) {
      const warm = { ...o, seconds: Math.min(o.seconds, 1) };
      await round(on, call, identity, group, warm);
      await round(off, call, identity, group, warm);
      const rates: { on: number[]; off: number[] } = { on: [], off: [] };
      for (let i = 0; i < o.rounds; i++) {
        const order = i % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
        for (const which of order)
          rates[which].push(await round(which === 'on' ? on : off, call, identity, group, o));
      }
      result[call] = { on: median(rates.on), off: median(rates.off) };
      const r = result[call];
      log(
        `${call.padEnd(7)} budgets on: ${r.on.toFixed(0)}/s, off: ${r.off.toFixed(0)}/s, ` +
          `on/off ${((100 * r.on) / r.off).toFixed(1)} % (on ${rates.on.map((x) => x.toFixed(0)).join(' ')}; ` +
          `off ${rates.off.map((x) => x.toFixed(0)).join(' ')})`,
      );
    }
    log(
      `(${db.kind}, ${o.rounds} rounds of ${o.seconds} s per call and side, concurrency ${o.concurrency})`,
    );
    return result;
  } finally {
    // Arbor's close() closes the database too, which both share: stop what writes, close it once.
    for (const a of [on, off]) await a.usage?.flusher.stop();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
