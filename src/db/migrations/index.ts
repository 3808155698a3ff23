import type { Knex } from 'knex';
import * as m0001 from './0001-groups.js';
// @migration-imports (append one import per migration below this line)

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** Every migration, in order. Append only: a merged migration is never edited. */
export const migrations: ReadonlyArray<readonly [string, Migration]> = [
  ['0001-groups', m0001],
  // @migration-list (append one entry per migration below this line, in number order)
];
