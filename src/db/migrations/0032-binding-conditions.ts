import type { Knex } from 'knex';

/**
 * A role binding may carry a condition (a CEL expression, with a title and description):
 * it grants only on decisions for which the expression holds (docs/api.md, "Conditional
 * role bindings"). Set at create, checked there; NULL: unconditional, as every binding
 * made before. The text is bounded here too (1,000 characters, as the service checks).
 *
 * `conditional` mirrors whether there is one, and who-can's index (migration 0022) carries
 * it beside the window, so that its scans, which count only unconditional bindings (a
 * condition cannot be evaluated without a request), stay index-only. Rebuilt under its name.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE role_bindings
      ADD COLUMN condition jsonb,
      ADD COLUMN conditional boolean GENERATED ALWAYS AS (condition IS NOT NULL) STORED,
      ADD CONSTRAINT role_bindings_condition_shape CHECK (
        condition IS NULL OR (
          jsonb_typeof(condition->'expression') = 'string'
          AND length(condition->>'expression') BETWEEN 1 AND 1000
          AND length(coalesce(condition->>'title', '')) <= 200
          AND length(coalesce(condition->>'description', '')) <= 1000
        )
      );
    ALTER TABLE role_bindings
      DROP CONSTRAINT role_bindings_unique,
      ADD CONSTRAINT role_bindings_unique UNIQUE (parent_uid, identity_uid, role_uid)
        INCLUDE (expire_time, not_before, conditional, uid);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE role_bindings
      DROP CONSTRAINT role_bindings_unique,
      ADD CONSTRAINT role_bindings_unique UNIQUE (parent_uid, identity_uid, role_uid)
        INCLUDE (expire_time, not_before, uid);
    ALTER TABLE role_bindings
      DROP CONSTRAINT role_bindings_condition_shape,
      DROP COLUMN conditional,
      DROP COLUMN condition;
  `);
}
