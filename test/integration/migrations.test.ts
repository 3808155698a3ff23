import test from 'ava';
import { migrateDownAll, migrateLatest, migrationStatus } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { freshDatabase } from '../helpers/db.js';

test('migrations: up, down to nothing, and up again', async (t) => {
  const db = await freshDatabase();
  try {
    const first = await migrateLatest(db.knex);
    t.deepEqual(
      first,
      migrations.map(([n]) => n),
    );
    t.deepEqual((await migrationStatus(db.knex)).pending, []);
    await db.knex('groups').insert({ uid: 'a'.repeat(40), name: 'x' });

    await migrateDownAll(db.knex);
    const tables = await db.knex.raw(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name NOT LIKE 'arbor_migrations%'",
    );
    t.deepEqual(tables.rows, [], 'down() leaves no table behind');

    const again = await migrateLatest(db.knex);
    t.deepEqual(again, first);
    t.is(Number((await db.knex('groups').count({ n: '*' }))[0]?.n), 0);
    t.deepEqual(await migrateLatest(db.knex), [], 'a second run applies nothing');
  } finally {
    await db.close();
  }
});
