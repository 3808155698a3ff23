import test from 'ava';
import { isRpcError } from '../../src/core/rpc-error.js';
import { kx, KnexUnitOfWork } from '../../src/db/unit-of-work.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { postgresOnly } from '../helpers/need-tool.js';

/**
 * A transaction PostgreSQL aborts for a conflict (40001, 40P01) is run again by the unit of
 * work, a bounded number of times; any other failure is not. The conflicts here are real:
 * a deadlock between two transactions, and errors raised by the server with those codes.
 */

let db: TestDatabase;
let uow: KnexUnitOfWork;

test.before(async () => {
  db = await freshDatabase();
  await db.knex.raw('CREATE TABLE scratch (id int PRIMARY KEY, n int NOT NULL)');
  await db.knex.raw('INSERT INTO scratch VALUES (1, 0), (2, 0)');
  uow = new KnexUnitOfWork(db.knex);
});
test.after.always(async () => {
  await db?.close();
});

/** Raises a real server error with this SQLSTATE. */
const raise = (code: string) =>
  `DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '${code}'; END $$`;

// PGlite runs one transaction at a time: no deadlock to provoke there.
postgresOnly(test.serial)(
  'a deadlock between two writers is resolved by running the loser again',
  async (t) => {
    const before = uow.conflictRetries;
    let firstDone = 0;
    let release!: () => void;
    const bothLocked = new Promise<void>((r) => (release = r));
    /** Lock `a`, wait until the other side holds `b`, then take `b`: a lock cycle. */
    const writer = (a: number, b: number) =>
      uow.run(async (tx) => {
        await kx(tx).raw('UPDATE scratch SET n = n + 1 WHERE id = ?', [a]);
        if (++firstDone === 2) release();
        await bothLocked;
        await kx(tx).raw('UPDATE scratch SET n = n + 1 WHERE id = ?', [b]);
      });
    await Promise.all([writer(1, 2), writer(2, 1)]);
    const rows = await db.knex.raw('SELECT id, n FROM scratch ORDER BY id');
    // Both transactions committed once each: every row was incremented by both.
    t.deepEqual(
      (rows.rows as Array<{ id: number; n: number }>).map((r) => r.n),
      [2, 2],
    );
    t.is(uow.conflictRetries - before, 1);
  },
);

test.serial('a serialization failure is tried three times in all, then ABORTED', async (t) => {
  for (const code of ['40001', '40P01']) {
    let runs = 0;
    const e = await t.throwsAsync(
      uow.run(async (tx) => {
        runs++;
        await kx(tx).raw(raise(code));
      }),
    );
    t.true(isRpcError(e) && e.code === 10, `${code}: ${String(e)}`);
    t.is(runs, 3, code);
  }
  // Once through on the second try: the answer is the second run's.
  let runs = 0;
  const out = await uow.run(async (tx) => {
    if (++runs === 1) await kx(tx).raw(raise('40001'));
    return runs;
  });
  t.is(out, 2);
});

test.serial('other failures are not run again', async (t) => {
  let runs = 0;
  await t.throwsAsync(
    uow.run(async (tx) => {
      runs++;
      await kx(tx).raw('INSERT INTO scratch VALUES (1, 0)');
    }),
  );
  t.is(runs, 1);
});
