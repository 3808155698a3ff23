import type { Knex } from 'knex';

/**
 * `managed_by`: the custom resource (`Kind namespace/name`) that manages a group, identity
 * or role binding, written by the reconciler. Services refuse other callers' changes to a
 * managed row (FAILED_PRECONDITION), so drift never lingers until the next resync.
 */
const TABLES = ['groups', 'identities', 'role_bindings'];

export async function up(knex: Knex): Promise<void> {
  for (const t of TABLES) await knex.raw(`ALTER TABLE ${t} ADD COLUMN managed_by text`);
}

export async function down(knex: Knex): Promise<void> {
  for (const t of TABLES) await knex.raw(`ALTER TABLE ${t} DROP COLUMN managed_by`);
}
