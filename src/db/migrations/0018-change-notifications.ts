import type { Knex } from 'knex';

/**
 * Every committed change to the rows the read cache holds (db/change-feed.ts) is announced
 * on the channel `arbor_changes`, in the writing transaction, so the announcement is
 * delivered if and only if the change commits, and to every process that listens.
 *
 * A payload is `<kind>:<key>`: `g:<group uid>` for a group row, `b:<identity uid>` for the
 * grants of an identity (its role bindings), and `<kind>:*` for "all of that kind" (a role's
 * capabilities are part of every grant that names it; a statement touching many rows sends
 * one wildcard rather than thousands of keys). Statement-level triggers with transition
 * tables: one trigger call per statement however many rows it touches, and PostgreSQL
 * allows a transition table on a trigger of one event only, hence one per event (TRUNCATE
 * has no rows to name, and announces the wildcard).
 */
const LIMIT = 32;

const FUNCTIONS = `
CREATE FUNCTION arbor_announce(kind text, keys text[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE k text;
BEGIN
  IF keys IS NULL THEN RETURN; END IF;
  IF cardinality(keys) > ${LIMIT} THEN
    PERFORM pg_notify('arbor_changes', kind || ':*');
    RETURN;
  END IF;
  FOREACH k IN ARRAY keys LOOP
    PERFORM pg_notify('arbor_changes', kind || ':' || k);
  END LOOP;
END $$;

CREATE FUNCTION arbor_groups_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('arbor_changes', 'g:*');
  ELSIF TG_OP = 'INSERT' THEN
    PERFORM arbor_announce('g', (SELECT array_agg(DISTINCT uid) FROM changed_new));
  ELSE
    PERFORM arbor_announce('g', (SELECT array_agg(DISTINCT uid) FROM changed_old));
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION arbor_bindings_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'TRUNCATE' THEN
    PERFORM pg_notify('arbor_changes', 'b:*');
  ELSIF TG_OP = 'INSERT' THEN
    PERFORM arbor_announce('b', (SELECT array_agg(DISTINCT identity_uid) FROM changed_new));
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM arbor_announce('b', (SELECT array_agg(DISTINCT identity_uid) FROM changed_old));
  ELSE
    PERFORM arbor_announce('b', (SELECT array_agg(DISTINCT identity_uid) FROM
      (SELECT identity_uid FROM changed_old UNION SELECT identity_uid FROM changed_new) AS u));
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION arbor_roles_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- A new role is bound nowhere yet; any other change may alter grants that name it.
  IF TG_OP <> 'INSERT' THEN PERFORM pg_notify('arbor_changes', 'b:*'); END IF;
  RETURN NULL;
END $$;
`;

/** [table, trigger function]: a row of `groups` keeps its uid (groups never move). */
const TABLES = [
  ['groups', 'arbor_groups_changed'],
  ['role_bindings', 'arbor_bindings_changed'],
  ['roles', 'arbor_roles_changed'],
] as const;

function triggers(table: string, fn: string): string {
  return `
CREATE TRIGGER ${table}_announce_insert AFTER INSERT ON ${table}
  REFERENCING NEW TABLE AS changed_new FOR EACH STATEMENT EXECUTE FUNCTION ${fn}();
CREATE TRIGGER ${table}_announce_update AFTER UPDATE ON ${table}
  REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
  FOR EACH STATEMENT EXECUTE FUNCTION ${fn}();
CREATE TRIGGER ${table}_announce_delete AFTER DELETE ON ${table}
  REFERENCING OLD TABLE AS changed_old FOR EACH STATEMENT EXECUTE FUNCTION ${fn}();
CREATE TRIGGER ${table}_announce_truncate AFTER TRUNCATE ON ${table}
  FOR EACH STATEMENT EXECUTE FUNCTION ${fn}();
`;
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw(FUNCTIONS + TABLES.map(([t, fn]) => triggers(t, fn)).join(''));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ${TABLES.map(
      ([t]) => `DROP TRIGGER ${t}_announce_insert ON ${t};
    DROP TRIGGER ${t}_announce_update ON ${t};
    DROP TRIGGER ${t}_announce_delete ON ${t};
    DROP TRIGGER ${t}_announce_truncate ON ${t};`,
    ).join('\n    ')}
    DROP FUNCTION arbor_groups_changed();
    DROP FUNCTION arbor_bindings_changed();
    DROP FUNCTION arbor_roles_changed();
    DROP FUNCTION arbor_announce(text, text[]);
  `);
}
