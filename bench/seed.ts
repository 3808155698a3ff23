import { getPriority, setPriority } from 'node:os';
import type pg from 'pg';
import {
  EDITOR_ROLE,
  SQL_UID_FUNCTIONS,
  VIEWER_ROLE,
  WHO_CAN_ROLE,
  expectedCounts,
  type Scale,
} from './scale.js';

const TABLES = ['groups', 'group_closure', 'identities', 'role_bindings'];

type Log = (msg: string) => void;

async function step(log: Log, label: string, fn: () => Promise<number | void>): Promise<void> {
  const t0 = performance.now();
  const n = await fn();
  const s = ((performance.now() - t0) / 1000).toFixed(1);
  log(`  ${label}${typeof n === 'number' ? `: ${n.toLocaleString('en')} rows` : ''} (${s} s)`);
}

/**
 * The seed's work is done by its PostgreSQL backend, not by this process: give the backend
 * this process's niceness (`nice -n 10 npm run bench …`), so a seed on a shared machine
 * yields the CPU as the command asked. Only for a server on this host that we may renice.
 */
async function niceBackend(c: pg.ClientBase, log: Log): Promise<void> {
  const mine = getPriority();
  if (mine <= 0) return;
  const { rows } = await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  try {
    setPriority(rows[0]!.pid, mine);
    log(`  the seeding backend (pid ${rows[0]!.pid}) runs at nice ${mine}, as this process`);
  } catch {
    log(
      `  could not renice the seeding backend (pid ${rows[0]!.pid}): it runs at its own priority`,
    );
  }
}

/**
 * Fill an empty, migrated database with the scale's tree, identities and role bindings,
 * entirely in SQL (INSERT … SELECT generate_series). Non-unique indexes are dropped for
 * the load and rebuilt from their own definitions afterwards; foreign-key triggers are
 * off for this session only (the rows are consistent by construction and counted at the
 * end). Finishes with VACUUM ANALYZE so index-only scans see an all-visible map.
 *
 * @returns seconds taken.
 */
export async function seed(c: pg.ClientBase, s: Scale, log: Log): Promise<number> {
  const t0 = performance.now();
  const want = expectedCounts(s);
  log(
    `seeding ${s.name}: ${want.groups.toLocaleString('en')} groups, ` +
      `${want.closure.toLocaleString('en')} closure rows, ${want.identities.toLocaleString('en')} ` +
      `identities, ${want.roleBindings.toLocaleString('en')} role bindings`,
  );
  await niceBackend(c, log);
  await c.query(`SET session_replication_role = replica; SET synchronous_commit = off;
                 SET maintenance_work_mem = '512MB'; SELECT setseed(0.42);`);
  await c.query(SQL_UID_FUNCTIONS);

  const { rows: indexes } = await c.query<{ name: string; def: string }>(
    `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
       FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
      WHERE t.relname = ANY($1) AND NOT i.indisunique`,
    [TABLES],
  );
  for (const ix of indexes) await c.query(`DROP INDEX ${ix.name}`);
  log(`  dropped ${indexes.length} non-unique indexes for the load`);

  const rows = async (sql: string, params: unknown[] = []) =>
    (await c.query(sql, params)).rowCount ?? 0;

  await step(log, 'organisations', () =>
    rows(
      `INSERT INTO groups (uid, parent_uid, name, description, created_at, updated_at)
       SELECT pg_temp.org_uid(o), NULL, 'org-' || o, 'bench organisation', ts, ts
         FROM (SELECT o, timestamptz '2024-01-01' + random() * interval '30 days' AS ts
                 FROM generate_series(0, $1 - 1) o) s`,
      [s.orgs],
    ),
  );
  for (let o = 0; o < s.orgs; o++) {
    await step(log, `org ${o + 1}/${s.orgs}: teams and projects`, async () => {
      const teams = await rows(
        `INSERT INTO groups (uid, parent_uid, name, description, created_at, updated_at)
         SELECT pg_temp.team_uid($1, t), pg_temp.org_uid($1),
                'team-' || substr(md5('n-' || $1 || '-' || t), 1, 12), '', ts, ts
           FROM (SELECT t, timestamptz '2024-02-01' + random() * interval '365 days' AS ts
                   FROM generate_series(0, $2 - 1) t) s`,
        [o, s.teams],
      );
      const projects = await rows(
        `INSERT INTO groups (uid, parent_uid, name, description, created_at, updated_at)
         SELECT pg_temp.team_uid($1, t) || '/' || substr(md5('bench-proj-' || $1 || '-' || t || '-' || p), 1, 16),
                pg_temp.team_uid($1, t),
                'proj-' || substr(md5('m-' || $1 || '-' || t || '-' || p), 1, 12), '', ts, ts
           FROM (SELECT t, p, timestamptz '2024-02-01' + random() * interval '365 days' AS ts
                   FROM generate_series(0, $2 - 1) t, generate_series(0, $3 - 1) p) s`,
        [o, s.wideTeams, s.projectsPerWide],
      );
      return teams + projects;
    });
  }
  await step(log, 'group_closure depth 1', () =>
    rows(`INSERT INTO group_closure (ancestor_uid, uid, depth, name, created_at)
          SELECT parent_uid, uid, 1, name, created_at FROM groups WHERE parent_uid IS NOT NULL`),
  );
  for (let depth = 2; ; depth++) {
    let n = 0;
    await step(log, `group_closure depth ${depth}`, async () => {
      n = await rows(
        `INSERT INTO group_closure (ancestor_uid, uid, depth, name, created_at)
         SELECT p.parent_uid, c.uid, $1::smallint, c.name, c.created_at
           FROM group_closure c JOIN groups p ON p.uid = c.ancestor_uid
          WHERE c.depth = $2::smallint AND p.parent_uid IS NOT NULL`,
        [depth, depth - 1],
      );
      return n;
    });
    if (n === 0) break;
  }
  // What migration 0013 backfills and the group store maintains: the seed bypasses the store.
  await step(log, 'group_counts', () =>
    rows(`INSERT INTO group_counts (uid, children, descendants)
          SELECT g.uid, coalesce(ch.n, 0), coalesce(d.n, 0)
            FROM groups g
            LEFT JOIN (SELECT parent_uid AS uid, count(*) AS n FROM groups
                        WHERE parent_uid IS NOT NULL GROUP BY parent_uid) ch ON ch.uid = g.uid
            LEFT JOIN (SELECT ancestor_uid AS uid, count(*) AS n FROM group_closure
                        GROUP BY ancestor_uid) d ON d.uid = g.uid`),
  );
  await step(log, 'identities', () =>
    rows(
      `INSERT INTO identities (uid, parent_uid, name, description, claim_match,
                               last_seen_at, created_at, updated_at)
       SELECT pg_temp.identity_uid(o, j, $3), pg_temp.team_uid(o, j % $3),
              'workload-' || o || '-' || j, '',
              jsonb_build_object('issuer', 'https://issuer-' || o || '.bench.invalid',
                                 'subject', 'workload-' || j), ts, ts, ts
         FROM (SELECT o, j, timestamptz '2024-06-01' + random() * interval '180 days' AS ts
                 FROM generate_series(0, $1 - 1) o, generate_series(0, $2 - 1) j) s`,
      [s.orgs, s.identitiesPerOrg, s.teams],
    ),
  );
  // Binding k of identity j: at a team, except every 1,000th identity's first binding,
  // which is at the organisation. Identity (0, 0) is therefore a viewer of organisation 0.
  await step(log, 'role_bindings', () =>
    rows(
      `INSERT INTO role_bindings (uid, parent_uid, identity_uid, role_uid, created_at, updated_at)
       SELECT g || '/' || substr(md5('bench-rb-' || o || '-' || j || '-' || k), 1, 16), g,
              pg_temp.identity_uid(o, j, $3), CASE WHEN k % 2 = 0 THEN $5 ELSE $6 END, ts, ts
         FROM (SELECT o, j, k, timestamptz '2024-09-01' + random() * interval '90 days' AS ts,
                      CASE WHEN k = 0 AND j % 1000 = 0 THEN pg_temp.org_uid(o)
                           ELSE pg_temp.team_uid(o, (j * $4 + k) % $3) END AS g
                 FROM generate_series(0, $1 - 1) o, generate_series(0, $2 - 1) j,
                      generate_series(0, $4 - 1) k) s`,
      [s.orgs, s.identitiesPerOrg, s.teams, s.bindingsPerIdentity, VIEWER_ROLE, EDITOR_ROLE],
    ),
  );
  // Bindings above the access.whoCan group (team 0's first project of organisation 0).
  await step(log, 'who-can bindings', () =>
    rows(
      `INSERT INTO role_bindings (uid, parent_uid, identity_uid, role_uid, created_at, updated_at)
       SELECT g || '/' || substr(md5('bench-whocan-' || j || '-' || k), 1, 16), g,
              pg_temp.identity_uid(0, j, $2), $3, now(), now()
         FROM (SELECT j, k, CASE WHEN k = 0 THEN pg_temp.org_uid(0)
                                 ELSE pg_temp.team_uid(0, 0) END AS g
                 FROM generate_series(0, $1 - 1) j, generate_series(0, 1) k) s`,
      [s.whoCanIdentities, s.teams, WHO_CAN_ROLE],
    ),
  );
  for (const ix of indexes) {
    await step(log, `rebuild ${ix.name}`, async () => {
      await c.query(ix.def);
    });
  }
  await c.query('RESET session_replication_role');
  await step(log, 'VACUUM (ANALYZE)', async () => {
    await c.query(`VACUUM (ANALYZE) ${[...TABLES, 'group_counts'].join(', ')}`);
  });

  const { rows: got } = await c.query<Record<string, string>>(
    `SELECT (SELECT count(*) FROM groups) AS groups,
            (SELECT count(*) FROM group_closure) AS closure,
            (SELECT count(*) FROM identities) AS identities,
            (SELECT count(*) FROM role_bindings) AS "roleBindings",
            (SELECT count(*) FROM group_counts) AS "groupCounts"`,
  );
  for (const [k, v] of Object.entries({ ...want, groupCounts: want.groups })) {
    if (Number(got[0]![k]) !== v) throw new Error(`seed: ${k} is ${got[0]![k]}, expected ${v}`);
  }
  const seconds = (performance.now() - t0) / 1000;
  log(`seeded in ${seconds.toFixed(1)} s`);
  return seconds;
}
