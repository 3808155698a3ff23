/**
 * `npx tsx bench/promotion-probe.ts [--seconds=8]`: what one list page's query leaves to the
 * garbage collector, by how it is sent. Each form runs alone in a child process with the
 * image's node flags and `--trace-gc-nvp`, one query at a time for `seconds` (so no row waits
 * for another request): the 50-row children page of the full seed through
 *
 * - `promise`: pg's promise form of `client.query(config)` (a pg.Pool client),
 * - `callback`: pg's callback form, wrapped in a promise of our own,
 * - `statement`: `Statement.rows` (src/db/prepared.ts) on a Knex pool, as Arbor runs it,
 *
 * and reports, from V8's own trace, the bytes allocated and promoted to the old generation
 * per query and the scavenges' time per query. Why: a list page's rows were promoted on
 * every young collection, which made the collector most of what a page cost beyond the
 * baseline (BENCHMARKS.md, 2026-11-30).
 */
import { execFileSync } from 'node:child_process';
import knexFactory from 'knex';
import pg from 'pg';
import { Statement } from '../src/db/prepared.js';
import { ensureDatabase } from './db.js';
import { imageNodeFlags } from './procs.js';
import { PAGE_SIZE, orgUid, scaleOf } from './scale.js';

const FORMS = ['promise', 'callback', 'statement'] as const;
type Form = (typeof FORMS)[number];

const args = process.argv.slice(2);
const seconds = Number(args.find((a) => a.startsWith('--seconds='))?.slice(10) ?? 8);
const form = args.find((a) => a.startsWith('--form='))?.slice(7) as Form | undefined;

const PAGE = new Statement(
  'SELECT uid, parent_uid, name, description, resource_limits, verified, created_at, ' +
    'updated_at, name AS _k FROM groups WHERE parent_uid = $1 ORDER BY name, uid LIMIT $2',
);

/** The child: one form, queries back to back; prints how many it ran. */
async function child(f: Form): Promise<void> {
  const db = await ensureDatabase(scaleOf([]));
  const values = [orgUid(0), PAGE_SIZE + 1];
  const pool = new pg.Pool({ connectionString: db.url, max: 2 });
  const knex = knexFactory({ client: 'pg', connection: db.url, pool: { min: 0, max: 2 } });
  const q = { name: PAGE.name, text: PAGE.text, values };
  const once: Record<Form, () => Promise<unknown[]>> = {
    promise: async () => {
      const c = await pool.connect();
      try {
        return (await c.query(q)).rows;
      } finally {
        c.release();
      }
    },
    callback: async () => {
      const c = await pool.connect();
      try {
        return await new Promise<unknown[]>((ok, bad) =>
          c.query(q, (e: Error | null, r: pg.QueryResult) => (e ? bad(e) : ok(r.rows))),
        );
      } finally {
        c.release();
      }
    },
    statement: () => PAGE.rows(knex, values),
  };
  const until = Date.now() + seconds * 1000;
  let n = 0;
  while (Date.now() < until) {
    if ((await once[f]()).length !== PAGE_SIZE + 1) throw new Error('the seed has no full page');
    n++;
  }
  console.log(`QUERIES ${n}`);
  await Promise.all([pool.end(), knex.destroy()]);
}

/** Sums over V8's `--trace-gc-nvp` lines of one child's run. */
function summarise(out: string): { n: number; allocated: number; promoted: number; ms: number } {
  const n = Number(/QUERIES (\d+)/.exec(out)?.[1] ?? NaN);
  let allocated = 0;
  let promoted = 0;
  let ms = 0;
  for (const m of out.matchAll(/pause=([\d.]+) .*? gc=s .*?allocated=(\d+) promoted=(\d+)/g)) {
    ms += Number(m[1]);
    allocated += Number(m[2]);
    promoted += Number(m[3]);
  }
  return { n, allocated, promoted, ms };
}

if (form !== undefined) await child(form);
else {
  console.log(`| form | queries/s | allocated KB/query | promoted KB/query | scavenges µs/query |`);
  console.log('|---|--:|--:|--:|--:|');
  for (const f of FORMS) {
    const out = execFileSync(
      process.execPath,
      [
        ...imageNodeFlags(),
        '--trace-gc-nvp',
        '--import',
        'tsx',
        import.meta.filename,
        `--form=${f}`,
        `--seconds=${seconds}`,
      ],
      { encoding: 'utf8', maxBuffer: 256 << 20 },
    );
    const s = summarise(out);
    console.log(
      `| ${f} | ${(s.n / seconds).toFixed(0)} | ${(s.allocated / s.n / 1024).toFixed(1)} | ` +
        `${(s.promoted / s.n / 1024).toFixed(2)} | ${((s.ms * 1000) / s.n).toFixed(1)} |`,
    );
  }
}
