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
import type { Arbor } from '../src/compose.js';
import { openDatabase } from '../src/db/connect.js';
import { arborOf, callsPerSecond, seedViewer } from './in-process-ab.js';
import { median } from './load.js';

interface Options {
  seconds: number;
  rounds: number;
  concurrency: number;
  log?: (m: string) => void;
}

/** Checks per second of `concurrency` closed loops for `seconds`; a denial stops the bench. */
function round(a: Arbor, who: string, group: string, o: Options): Promise<number> {
  const body = { capability: 'groups.list', groupUid: group };
  return callsPerSecond(who, o.seconds, o.concurrency, async (p) => {
    const r = await a.services.access.check(p, body);
    if (!r.allowed) throw new Error('the bench identity was denied');
  });
}

/** @returns the median checks per second, recording on and off, and their ratio. */
export async function benchLastUsed(o: Options): Promise<{ on: number; off: number }> {
  const log = o.log ?? console.log;
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-lu-'));
  const url = process.env.LAST_USED_PG_URL;
  const db = await openDatabase(url ? { url, dataDir: '' } : { dataDir: 'memory://' });
  const on = await arborOf(db, dir, { ARBOR_LAST_USED: 'true' });
  const off = await arborOf(db, dir, { ARBOR_LAST_USED: 'false' });
  try {
    const { identity, group } = await seedViewer(on, 'lu', 'checker');
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
