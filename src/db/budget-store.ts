import type { Knex } from 'knex';
import { RateLimiterPostgres, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { Statement } from './prepared.js';

/** The table migration 0027 makes; the library never creates it (`tableCreated: true`). */
const TABLE = 'budget_points';

/**
 * One consumption: add the points, or start the window afresh when the key's has ended.
 * The library's own statement, with its parameters renumbered to be used once each, in
 * order (`Statement`): `$4` and `$5` are both "now".
 */
const UPSERT = new Statement(
  `INSERT INTO ${TABLE} AS b (key, points, expire) VALUES ($1, $2, $3)
   ON CONFLICT (key) DO UPDATE SET
     points = CASE WHEN b.expire <= $4 THEN EXCLUDED.points ELSE b.points + EXCLUDED.points END,
     expire = CASE WHEN b.expire <= $5 THEN EXCLUDED.expire ELSE b.expire END
   RETURNING points, expire`,
);
/** `set` and `block`: the points and window given, whatever the key held. */
const UPSERT_FORCED = new Statement(
  `INSERT INTO ${TABLE} AS b (key, points, expire) VALUES ($1, $2, $3)
   ON CONFLICT (key) DO UPDATE SET points = EXCLUDED.points, expire = EXCLUDED.expire
   RETURNING points, expire`,
);
const GET = new Statement(
  `SELECT points, expire FROM ${TABLE} WHERE key = $1 AND (expire > $2 OR expire IS NULL)`,
);
const DELETE = new Statement(`DELETE FROM ${TABLE} WHERE key = $1 RETURNING key`);
const PRUNE = new Statement(`DELETE FROM ${TABLE} WHERE expire < $1`);

/** Dead rows (windows ended over an hour ago) are deleted at most this often per process. */
const PRUNE_EVERY_MS = 5 * 60_000;
const PRUNE_AFTER_MS = 60 * 60_000;

interface Row {
  points: number;
  expire: string | null;
}

/**
 * rate-limiter-flexible's PostgreSQL store, its statements run through Knex. The library's
 * own `storeType: 'knex'` takes a raw connection out of Knex's pool and calls node-pg's
 * `query({ name, text, values })` on it, which PGlite's connection does not speak, and
 * names its prepared statements, which a transaction-mode pooler does not keep; this store
 * replaces only the three storage calls (`_upsert`, `_get`, `_delete`, the ones every
 * store implements) with {@link Statement}s, which run as prepared statements on
 * PostgreSQL (unnamed behind a pooler) and through `knex.raw` on PGlite. Everything else,
 * windows, refusals and `RateLimiterRes`, is the library's.
 */
class KnexBudgetLimiter extends RateLimiterPostgres {
  readonly #knex: Knex;
  readonly #prune: (now: number) => void;

  constructor(
    knex: Knex,
    opts: { keyPrefix: string; points: number; duration: number },
    prune: (now: number) => void,
  ) {
    super({
      ...opts,
      storeClient: knex,
      storeType: 'knex',
      tableName: TABLE,
      tableCreated: true,
      // The library's own sweep is a timer per limiter; this store prunes on use instead.
      clearExpiredByTimeout: false,
      // A key that has spent its budget is refused from this process's memory until its
      // window ends: a caller in a loop past its budget costs the database nothing more.
      inMemoryBlockOnConsumed: opts.points,
    });
    this.#knex = knex;
    this.#prune = prune;
  }

  async _upsert(key: string, points: number, msDuration: number, forceExpire = false) {
    const now = Date.now();
    const expire = msDuration > 0 ? now + msDuration : null;
    this.#prune(now);
    const rows = forceExpire
      ? await UPSERT_FORCED.rows<Row>(this.#knex, [key, points, expire])
      : await UPSERT.rows<Row>(this.#knex, [key, points, expire, now, now]);
    return { rows };
  }

  async _get(key: string) {
    const rows = await GET.rows<Row>(this.#knex, [key, Date.now()]);
    return rows.length === 0 ? null : { rows };
  }

  async _delete(key: string): Promise<boolean> {
    return (await DELETE.rows(this.#knex, [key])).length > 0;
  }
}

/** Makes the limiters of every budget over one table; see {@link budgetLimiters}. */
export type BudgetLimiterFactory = (opts: {
  keyPrefix: string;
  points: number;
  duration: number;
}) => RateLimiterAbstract;

/**
 * Limiters kept in the database `knex` reaches (the primary), so that a budget is one
 * count for every worker and replica of the installation. Rows whose window ended over an
 * hour ago are deleted in the background, at most every five minutes, by whichever limiter
 * is used; a failed clean-up is only reported (`warn`): it is retried at the next.
 */
export function budgetLimiters(knex: Knex, warn: (err: unknown) => void): BudgetLimiterFactory {
  let nextPrune = 0;
  const prune = (now: number) => {
    if (now < nextPrune) return;
    nextPrune = now + PRUNE_EVERY_MS;
    PRUNE.rows(knex, [now - PRUNE_AFTER_MS]).catch(warn);
  };
  return (opts) => new KnexBudgetLimiter(knex, opts, prune);
}
