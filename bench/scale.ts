import { createHash } from 'node:crypto';
import { builtinRoleUid } from '../src/resources/roles/builtin-roles.js';

/**
 * The shape of the seeded data and how long each load case runs, per scale.
 *
 * `10m` is ten times `full`: 100 organisations of the same shape
 * (10,000,100 groups), 10,000 identities each (1,000,000) with one binding each
 * (1,000,000, plus who-can's). Organisation 0, which every case reads, has the same
 * 100,000-group subtree as at `full`, and who-can the same 10,000 bindings above its
 * group: only the tables around them grow, which is what the scale asks (does the cost
 * of the same question stay flat when the data grows tenfold?).
 *
 * Per organisation: `teams` direct children (level 2), and under the first `wideTeams` of
 * them `projectsPerWide` grandchildren each (level 3). At full scale that is
 * 60,000 + 40 × 1,000 = 100,000 groups below every organisation, so `children_of` the
 * organisation is long enough for a page 1,000 pages deep (rows 49,951–50,000 of 60,000)
 * and `descendants_of` it is a 100,000-group subtree.
 */
export interface Scale {
  name: 'full' | 'quick' | '10m';
  orgs: number;
  teams: number;
  wideTeams: number;
  projectsPerWide: number;
  identitiesPerOrg: number;
  bindingsPerIdentity: number;
  /** Identities of organisation 0 bound twice above the who-can group (see whoCanBindings). */
  whoCanIdentities: number;
  /** The page number (page_size 50) of the "deep" children_of case. */
  deepPage: number;
  /** Seconds: warm-up, then `runs` measured runs of `runSeconds`. */
  warmupSeconds: number;
  runSeconds: number;
  runs: number;
}

export const SCALES: Record<Scale['name'], Scale> = {
  full: {
    name: 'full',
    orgs: 10,
    teams: 60_000,
    wideTeams: 40,
    projectsPerWide: 1_000,
    identitiesPerOrg: 5_000,
    bindingsPerIdentity: 4,
    whoCanIdentities: 5_000,
    deepPage: 1_000,
    warmupSeconds: 5,
    runSeconds: 10,
    runs: 3,
  },
  quick: {
    name: 'quick',
    orgs: 10,
    teams: 600,
    wideTeams: 40,
    projectsPerWide: 10,
    identitiesPerOrg: 50,
    bindingsPerIdentity: 4,
    whoCanIdentities: 50,
    deepPage: 10,
    warmupSeconds: 2,
    runSeconds: 3,
    runs: 3,
  },
  '10m': {
    name: '10m',
    orgs: 100,
    teams: 60_000,
    wideTeams: 40,
    projectsPerWide: 1_000,
    identitiesPerOrg: 10_000,
    bindingsPerIdentity: 1,
    whoCanIdentities: 5_000,
    deepPage: 1_000,
    warmupSeconds: 5,
    runSeconds: 10,
    runs: 3,
  },
};

/** `--quick`, `--scale=full|quick|10m` (default full). */
export function scaleOf(args: readonly string[]): Scale {
  const named = args.find((a) => a.startsWith('--scale='))?.slice('--scale='.length);
  const name = named ?? (args.includes('--quick') ? 'quick' : 'full');
  if (!(name in SCALES))
    throw new Error(`--scale=${name}: one of ${Object.keys(SCALES).join(', ')}`);
  return SCALES[name as Scale['name']];
}

/** The database a scale is seeded into (unless DATABASE_URL names one). */
export function databaseNameOf(s: Scale): string {
  return { full: 'arbor_bench', quick: 'arbor_bench_quick', '10m': 'arbor_bench_10m' }[s.name];
}

export function expectedCounts(s: Scale) {
  const perOrg = s.teams + s.wideTeams * s.projectsPerWide;
  return {
    groups: s.orgs * (1 + perOrg),
    closure: s.orgs * (s.teams + 2 * s.wideTeams * s.projectsPerWide),
    identities: s.orgs * s.identitiesPerOrg,
    roleBindings: s.orgs * s.identitiesPerOrg * s.bindingsPerIdentity + whoCanBindings(s),
  };
}

/**
 * The access.whoCan case's load: the first `whoCanIdentities` identities of organisation 0
 * bound (registry.pull, which grants groups.list) at the organisation and at its team 0,
 * both above the asked group: 10,000 bindings above it at full and 10m scale.
 */
export function whoCanBindings(s: Scale): number {
  return 2 * s.whoCanIdentities;
}

export const PAGE_SIZE = 50;
export const CONNECTIONS = 16;
export const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
/** ARBOR_REGISTRY_SERVICE of the bench's Arbor: its registry token server is on. */
export const REGISTRY_SERVICE = 'registry.bench.local';
/** The repository the registry token case pulls: `<org 0>/app`. */
export const REGISTRY_REPO = 'app';
export const VIEWER_ROLE = builtinRoleUid('viewer');
export const EDITOR_ROLE = builtinRoleUid('editor');
export const WHO_CAN_ROLE = builtinRoleUid('registry.pull');
/** Identities (o = 0, j < STS_IDENTITIES) get a claim match on the loopback issuer. */
export const STS_IDENTITIES = 16;
export const STS_SUBJECT = 'system:serviceaccount:bench:load';

/** Deterministic uids, as SQL and in TS (they must agree). STABLE, not IMMUTABLE: `text || int` is
 * only stable, and an IMMUTABLE SQL function with a stable body is not inlined (17x slower). */
export const SQL_UID_FUNCTIONS = `
CREATE OR REPLACE FUNCTION pg_temp.org_uid(o int) RETURNS text LANGUAGE sql STABLE AS
  $$ SELECT md5('bench-org-' || o) || substr(md5('bench-org2-' || o), 1, 8) $$;
CREATE OR REPLACE FUNCTION pg_temp.team_uid(o int, t int) RETURNS text LANGUAGE sql STABLE AS
  $$ SELECT pg_temp.org_uid(o) || '/' || substr(md5('bench-team-' || o || '-' || t), 1, 16) $$;
CREATE OR REPLACE FUNCTION pg_temp.identity_uid(o int, j int, teams int) RETURNS text
  LANGUAGE sql STABLE AS
  $$ SELECT pg_temp.team_uid(o, j % teams) || '/' || substr(md5('bench-id-' || o || '-' || j), 1, 16) $$;
`;

const md5 = (s: string) => createHash('md5').update(s).digest('hex');
export const orgUid = (o: number) => md5(`bench-org-${o}`) + md5(`bench-org2-${o}`).slice(0, 8);
export const teamUid = (o: number, t: number) =>
  `${orgUid(o)}/${md5(`bench-team-${o}-${t}`).slice(0, 16)}`;
export const identityUid = (o: number, j: number, teams: number) =>
  `${teamUid(o, j % teams)}/${md5(`bench-id-${o}-${j}`).slice(0, 16)}`;
