import type { Knex } from 'knex';

/**
 * Access reviews (docs/access-reviews.md): a review of a group's bindings, its items (one
 * per binding in scope when it was opened, with what the item shows of it then), and the
 * per-group schedule that opens them.
 *
 * Reviews hang under their group and go with it (ON DELETE CASCADE), as access requests
 * do: they are history, which the audit trail keeps. Items do not reference role_bindings:
 * a removed binding's item stays, saying what was decided. The partial indexes serve the
 * worker: open reviews by due time, schedules by their next opening.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE access_reviews (
      uid text COLLATE "C" PRIMARY KEY,
      parent_uid text COLLATE "C" NOT NULL REFERENCES groups(uid) ON DELETE CASCADE,
      state text NOT NULL DEFAULT 'OPEN' CHECK (state IN ('OPEN', 'COMPLETED', 'DEFAULTED')),
      due_time timestamptz(3) NOT NULL,
      default_decision text NOT NULL CHECK (default_decision IN ('keep', 'expire')),
      opened_by text NOT NULL,
      item_count integer NOT NULL CHECK (item_count >= 0),
      decided_count integer NOT NULL DEFAULT 0 CHECK (decided_count >= 0),
      closed_at timestamptz(3),
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX access_reviews_parent_created ON access_reviews (parent_uid, created_at, uid);
    CREATE INDEX access_reviews_created ON access_reviews (created_at, uid);
    CREATE INDEX access_reviews_open ON access_reviews (due_time, uid) WHERE state = 'OPEN';
    CREATE TABLE access_review_items (
      uid text COLLATE "C" PRIMARY KEY,
      parent_uid text COLLATE "C" NOT NULL REFERENCES access_reviews(uid) ON DELETE CASCADE,
      binding_uid text COLLATE "C" NOT NULL,
      group_uid text COLLATE "C" NOT NULL,
      identity_uid text COLLATE "C" NOT NULL,
      identity_name text NOT NULL,
      role_uid text COLLATE "C" NOT NULL,
      role_name text NOT NULL,
      last_used_at timestamptz(3),
      unused boolean NOT NULL,
      expire_time timestamptz(3),
      decision text CHECK (decision IN ('keep', 'shorten', 'remove')),
      decision_expire_time timestamptz(3),
      reason text,
      decided_by text,
      decided_at timestamptz(3),
      UNIQUE (parent_uid, binding_uid)
    );
    CREATE TABLE access_review_schedules (
      group_uid text COLLATE "C" PRIMARY KEY REFERENCES groups(uid) ON DELETE CASCADE,
      every_days integer NOT NULL CHECK (every_days BETWEEN 1 AND 365),
      due_in_days integer NOT NULL CHECK (due_in_days BETWEEN 1 AND 365),
      default_decision text NOT NULL CHECK (default_decision IN ('keep', 'expire')),
      next_open_at timestamptz(3) NOT NULL,
      set_by text NOT NULL,
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX access_review_schedules_next ON access_review_schedules (next_open_at, group_uid);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE access_review_schedules;
    DROP TABLE access_review_items;
    DROP TABLE access_reviews;
  `);
}
