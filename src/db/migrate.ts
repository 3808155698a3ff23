import type { Knex } from 'knex';
import { migrations } from './migrations/index.js';

const source: Knex.MigrationSource<string> = {
  getMigrations: () => Promise.resolve(migrations.map(([name]) => name)),
  getMigrationName: (name) => name,
  getMigration: (name) => {
    const found = migrations.find(([n]) => n === name);
    if (!found) throw new Error(`unknown migration ${name}`);
    return Promise.resolve(found[1]);
  },
};

const config: Knex.MigratorConfig = { migrationSource: source, tableName: 'arbor_migrations' };

/** Apply every pending migration; returns the names applied. */
export async function migrateLatest(knex: Knex): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest(config)) as [number, string[]];
  return applied;
}

/** Roll back every migration (tests of up → down → up). */
export async function migrateDownAll(knex: Knex): Promise<void> {
  await knex.migrate.rollback(config, true);
}

export async function migrationStatus(
  knex: Knex,
): Promise<{ applied: string[]; pending: string[] }> {
  const [done, pending] = (await knex.migrate.list(config)) as [
    Array<{ name: string } | string>,
    Array<{ file: string } | string>,
  ];
  const name = (x: { name: string } | { file: string } | string) =>
    typeof x === 'string' ? x : 'name' in x ? x.name : x.file;
  return { applied: done.map(name), pending: pending.map(name) };
}
