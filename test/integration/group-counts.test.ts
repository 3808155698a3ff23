import test from 'ava';
import fc from 'fast-check';
import { isRpcError } from '../../src/core/rpc-error.js';
import { newChildUid, newRootUid } from '../../src/core/uidp.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { KnexGroupStore } from '../../src/db/stores/group-store.js';
import { KnexUnitOfWork } from '../../src/db/unit-of-work.js';
import { freshDatabase, TEST_BACKEND, type TestDatabase } from '../helpers/db.js';

/**
 * The maintained counts (group_counts) against the truth, `count(*)` of `groups`, after
 * random batches of creates and deletes. Each batch runs its operations at once: on
 * PostgreSQL as concurrent transactions on several pooled connections (the pool has 10),
 * on PGlite one after the other (one embedded connection).
 */

let db: TestDatabase;
const store = new KnexGroupStore();
let uow: KnexUnitOfWork;

test.before(async () => {
  db = await freshDatabase();
  await migrateLatest(db.knex);
  uow = new KnexUnitOfWork(db.knex);
});
test.after.always(async () => {
  await db?.close();
});

type Op = { kind: 'create'; parent: number } | { kind: 'delete'; target: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('create' as const), parent: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), target: fc.nat() }) },
);

/** Creates and deletes that may lose a race (parent gone, child appeared) fail as the API would. */
async function apply(op: Op, known: string[]): Promise<void> {
  try {
    if (op.kind === 'create') {
      // One in five creates a new organization; the rest go below a known group.
      const parent = op.parent % 5 === 0 || known.length === 0 ? undefined : pick(known, op.parent);
      const uid = parent === undefined ? newRootUid() : newChildUid(parent);
      await uow.run((tx) =>
        store.insert(tx, {
          uid,
          parentUid: parent ?? null,
          name: `g${op.parent}`,
          description: '',
        }),
      );
      known.push(uid);
    } else if (known.length > 0) {
      const uid = pick(known, op.target);
      if (await uow.run((tx) => store.delete(tx, uid))) known.splice(known.indexOf(uid), 1);
    }
  } catch (e) {
    // NOT_FOUND (the parent was deleted meanwhile) or FAILED_PRECONDITION (a child exists).
    if (!isRpcError(e) || ![5, 9].includes(e.code)) throw e;
  }
}

function pick(xs: string[], n: number): string {
  return xs[n % xs.length]!;
}

interface Drift {
  uid: string;
  children: string;
  descendants: string;
  real_children: string;
  real_descendants: string;
}

/** Every group whose counts differ from `count(*)` (a missing row shows as -1). */
async function drift(): Promise<Drift[]> {
  const res = (await db.knex.raw(`
    SELECT g.uid, coalesce(gc.children, -1)::text AS children,
           coalesce(gc.descendants, -1)::text AS descendants,
           (SELECT count(*) FROM groups c WHERE c.parent_uid = g.uid)::text AS real_children,
           (SELECT count(*) FROM groups d WHERE starts_with(d.uid, g.uid || '/'))::text
             AS real_descendants
      FROM groups g LEFT JOIN group_counts gc ON gc.uid = g.uid`)) as { rows: Drift[] };
  return res.rows.filter(
    (r) => r.children !== r.real_children || r.descendants !== r.real_descendants,
  );
}

test.serial(
  'group counts: equal count(*) after random concurrent creates and deletes',
  async (t) => {
    const known: string[] = [];
    let batches = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(opArb, { minLength: 1, maxLength: 10 }), {
          minLength: 1,
          maxLength: 6,
        }),
        async (batchesOfOps) => {
          for (const ops of batchesOfOps) {
            await Promise.all(ops.map((op) => apply(op, known)));
            batches++;
          }
          const off = await drift();
          if (off.length > 0) t.log(off.slice(0, 5));
          return off.length === 0;
        },
      ),
      { numRuns: TEST_BACKEND === 'postgres' ? 25 : 15 },
    );
    const n = await db.knex('groups').count({ n: '*' });
    t.log(`${batches} batches; ${String(n[0]?.n)} groups at the end`);
    t.deepEqual(await drift(), []);
  },
);

test.serial('group counts: many creates below one organization at once stay exact', async (t) => {
  // All writers contend for the organization's row (and one team's): the ordered locking
  // must neither deadlock nor lose an increment.
  const org = newRootUid();
  await uow.run((tx) =>
    store.insert(tx, { uid: org, parentUid: null, name: 'org', description: '' }),
  );
  const team = newChildUid(org);
  await uow.run((tx) =>
    store.insert(tx, { uid: team, parentUid: org, name: 'team', description: '' }),
  );
  const made = await Promise.all(
    Array.from({ length: 40 }, (_, i) => {
      const parent = i % 2 === 0 ? org : team;
      const uid = newChildUid(parent);
      return uow
        .run((tx) => store.insert(tx, { uid, parentUid: parent, name: `c${i}`, description: '' }))
        .then(() => uid);
    }),
  );
  // Half of them deleted again, concurrently with 10 more creates.
  await Promise.all([
    ...made.slice(0, 20).map((uid) => uow.run((tx) => store.delete(tx, uid))),
    ...Array.from({ length: 10 }, (_, i) => {
      const uid = newChildUid(team);
      return uow.run((tx) =>
        store.insert(tx, { uid, parentUid: team, name: `late${i}`, description: '' }),
      );
    }),
  ]);
  const counts = await db.knex('group_counts').whereIn('uid', [org, team]).orderBy('uid');
  t.deepEqual(
    counts.map((r: { children: unknown; descendants: unknown }) => [
      Number(r.children),
      Number(r.descendants),
    ]),
    [
      [11, 31],
      [20, 20],
    ],
  );
  t.deepEqual(await drift(), []);
});

test.serial('group counts: anchored lists read their total from the counter', async (t) => {
  const org = newRootUid();
  await uow.run((tx) =>
    store.insert(tx, { uid: org, parentUid: null, name: 'read', description: '' }),
  );
  for (let i = 0; i < 3; i++) {
    const uid = newChildUid(org);
    await uow.run((tx) =>
      store.insert(tx, { uid, parentUid: org, name: `r${i}`, description: '' }),
    );
    await uow.run((tx) =>
      store.insert(tx, { uid: newChildUid(uid), parentUid: uid, name: 'x', description: '' }),
    );
  }
  const base = {
    filters: {},
    order: { field: 'name', direction: 'asc' as const },
    skip: 0,
    pageSize: 1,
    visibility: { kind: 'all' as const },
  };
  const seen: string[] = [];
  db.knex.on('query', (q: { sql: string }) => seen.push(q.sql));
  const children = await uow.read((tx) => store.list(tx, { ...base, uidp: { childrenOf: org } }));
  const below = await uow.read((tx) => store.list(tx, { ...base, uidp: { descendantsOf: org } }));
  db.knex.removeAllListeners('query');
  t.is(children.total, '3');
  t.is(below.total, '6');
  t.is(below.items.length, 1);
  t.truthy(below.nextKey);
  t.true(seen.some((s) => s.includes('FROM group_counts')));
  t.false(
    seen.some((s) => /count\(\*\)/i.test(s)),
    'no count(*) runs when the counter serves',
  );
});
