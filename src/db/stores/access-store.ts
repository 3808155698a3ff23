import type { Capability } from '../../auth/capabilities.js';
import { ancestryOf } from '../../core/uidp.js';
import type { Knex } from 'knex';
import {
  grantWindow,
  type AccessStore,
  type BindingGrant,
  type CheckFacts,
  type SeenBy,
  type StoredDelegation,
} from '../../resources/access/access-store.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import { whereVisible } from '../keyset.js';
import type { Tx } from '../../resources/tx.js';
import { Statement } from '../prepared.js';
import { kx } from '../unit-of-work.js';
import { storedCapabilities } from './role-store.js';
import type { Condition } from '../../auth/condition.js';

/** A role binding joined to its role, as the access and simulation stores read it. */
export interface BindingRow {
  uid: string;
  parent_uid: string;
  identity_uid: string;
  role_uid: string;
  role_name: string;
  role_description: string;
  capabilities: unknown;
  expire_time: Date | null;
  not_before: Date | null;
  condition: Condition | null;
}

/**
 * The columns of a `BindingRow`, over `BINDING_FROM`: every statement that reads bindings
 * for `toGrant` selects these, so a column added to a grant is added once.
 */
export const BINDING_COLUMNS = `rb.uid, rb.parent_uid, rb.identity_uid, rb.role_uid,
       r.name AS role_name, r.description AS role_description, r.capabilities,
       rb.expire_time, rb.not_before, rb.condition`;
export const BINDING_FROM = 'role_bindings rb JOIN roles r ON r.uid = rb.role_uid';

/** Not yet expired: the binding grants now or will once its `not_before` comes. */
const UNEXPIRED = '(rb.expire_time IS NULL OR rb.expire_time > now())';
/**
 * A binding grants from its `not_before` (inclusive; NULL: from creation) until its expiry
 * (exclusive; NULL: never).
 */
const LIVE = `(${UNEXPIRED} AND (rb.not_before IS NULL OR rb.not_before <= now()))`;
/**
 * Who-can counts only unconditional bindings: a condition is decided per request, and a
 * list has none (fail closed: a conditional binding is not counted as granting).
 */
const LIVE_UNCONDITIONAL = `(${LIVE} AND NOT rb.conditional)`;
/** Who-can lists the conditional ones apart, each with its condition. */
const LIVE_CONDITIONAL = `(${LIVE} AND rb.conditional)`;

const SELECT = `SELECT ${BINDING_COLUMNS} FROM ${BINDING_FROM}`;

/** The one place a binding row becomes a grant (access answers, simulation, the authorizer). */
export function toGrant(r: BindingRow): BindingGrant {
  return {
    uid: r.uid,
    groupUid: r.parent_uid,
    identityUid: r.identity_uid,
    role: { uid: r.role_uid, name: r.role_name, description: r.role_description },
    capabilities: storedCapabilities(r.capabilities),
    ...grantWindow(r.expire_time, r.not_before),
    ...(r.condition ? { condition: r.condition } : {}),
  };
}

async function rows(tx: Tx, sql: string, params: string[]): Promise<BindingGrant[]> {
  const res = (await kx(tx).raw(sql, params)) as { rows: BindingRow[] };
  return res.rows.map(toGrant);
}

/**
 * Everything one check reads, in one round trip: whether the group and the identity exist,
 * and the identity's unexpired bindings at the group or above it (`starts_with`: the asked
 * group lies below the binding's), scheduled ones included so that a denial can say which
 * would grant once started. Prepared, like the authorizer's grants query.
 */
const CHECK = new Statement(
  `WITH q AS (SELECT $1::text AS grp, $2::text AS who)
   SELECT EXISTS (SELECT 1 FROM groups g WHERE g.uid = q.grp) AS group_exists,
          EXISTS (SELECT 1 FROM identities i WHERE i.uid = q.who) AS identity_exists,
          b.*
     FROM q LEFT JOIN LATERAL (
       SELECT ${BINDING_COLUMNS} FROM ${BINDING_FROM}
        WHERE rb.identity_uid = q.who AND ${UNEXPIRED}
          AND (rb.parent_uid = q.grp OR starts_with(q.grp, rb.parent_uid || '/'))
     ) b ON true
    ORDER BY b.uid`,
);

export class KnexAccessStore implements AccessStore {
  async checkFacts(tx: Tx, identityUid: string, groupUid: string): Promise<CheckFacts> {
    const found = await CHECK.rows<
      { group_exists: boolean; identity_exists: boolean } & (
        BindingRow | { [K in keyof BindingRow]: null }
      )
    >(kx(tx), [groupUid, identityUid]);
    const first = found[0];
    return {
      groupExists: first?.group_exists === true,
      identityExists: first?.identity_exists === true,
      bindings: found.flatMap((r) => (r.uid === null ? [] : [toGrant(r as BindingRow)])),
    };
  }

  async identityExists(tx: Tx, uid: string): Promise<boolean> {
    return (await kx(tx)('identities').where({ uid }).first('uid')) !== undefined;
  }

  async existingGroups(tx: Tx, uids: readonly string[]): Promise<Set<string>> {
    if (uids.length === 0) return new Set();
    const found = (await kx(tx)('groups')
      .whereIn('uid', [...uids])
      .select('uid')) as {
      uid: string;
    }[];
    return new Set(found.map((r) => r.uid));
  }

  bindingsOf(tx: Tx, identityUid: string): Promise<BindingGrant[]> {
    return rows(tx, `${SELECT} WHERE rb.identity_uid = ? AND ${UNEXPIRED} ORDER BY rb.uid`, [
      identityUid,
    ]);
  }

  /**
   * A keyset over the distinct identities of the bindings on the asked group's ancestry,
   * filtered in SQL by what the caller may see. The roles that hold `cap` are read first
   * (a handful of rows), so that each ancestor is one index-only scan of `role_bindings_unique`
   * in identity order (migration 0019): the page merges those scans and stops after
   * `pageSize + 1` identities, and the count de-duplicates the same merged, ordered scans
   * without sorting them. Asked as one query over `r.capabilities @> …`, the planner guessed
   * ~1 % of the rows matched, never chose the ordered scans, and sorted every live binding
   * on the path twice (distinct, then count).
   */
  async holdersPage(
    tx: Tx,
    groupUid: string,
    cap: Capability,
    seen: SeenBy,
    q: PageQuery,
  ): Promise<StorePage<string>> {
    const roles = await rolesHolding(tx, cap);
    if (roles.length === 0) return { items: [], total: q.knownTotal ?? '0' };
    const desc = q.order.direction === 'desc';
    const after = q.after?.[q.after.length - 1];
    const page = holders(tx, groupUid, roles, seen, desc, (b) => {
      if (typeof after === 'string') b.where('rb.identity_uid', desc ? '<' : '>', after);
    });
    // The distinct identities of the merged scans, and when the first binding counted
    // expires or the first scheduled one starts (the count may change then, with no write).
    const count = async (): Promise<{ total: string; totalUntil?: number }> => {
      const all = holders(tx, groupUid, roles, seen, false, undefined, true);
      const found = await shaped(
        `SELECT count(*) AS n, min(e) AS until FROM (
           SELECT identity_uid, min(expire_time) AS e FROM (${all.sql}) u GROUP BY identity_uid
         ) s`,
      ).rows<{ n: string | number; until: Date | null }>(kx(tx), [...all.bindings]);
      const starts = await firstStart(tx, groupUid, roles, seen);
      const ends = found[0]?.until?.getTime();
      const until = ends === undefined ? starts : Math.min(ends, starts ?? ends);
      return {
        total: String(found[0]?.n ?? 0),
        ...(until === undefined ? {} : { totalUntil: until }),
      };
    };
    const [found, counted] = await Promise.all([
      shaped(
        `SELECT identity_uid FROM (${page.sql}) u GROUP BY identity_uid
          ORDER BY identity_uid ${desc ? 'DESC' : 'ASC'} LIMIT ? OFFSET ?`,
      ).rows<{ identity_uid: string }>(kx(tx), [...page.bindings, q.pageSize + 1, q.skip]),
      q.knownTotal === undefined ? count() : Promise.resolve({ total: q.knownTotal }),
    ]);
    const items = found.slice(0, q.pageSize).map((r) => r.identity_uid);
    const last = items[items.length - 1];
    return {
      items,
      ...(found.length > q.pageSize && last !== undefined ? { nextKey: [last] } : {}),
      ...counted,
    };
  }

  async bindingsGranting(
    tx: Tx,
    groupUid: string,
    cap: Capability,
    seen: SeenBy,
    identityUids: readonly string[],
  ): Promise<BindingGrant[]> {
    if (identityUids.length === 0) return [];
    const found = (await granting(tx, groupUid, cap, seen)
      .whereIn('rb.identity_uid', [...identityUids])
      .select(
        'rb.uid',
        'rb.parent_uid',
        'rb.identity_uid',
        'rb.role_uid',
        'r.name as role_name',
        'r.description as role_description',
        'r.capabilities',
      )
      .orderBy([
        { column: 'rb.identity_uid', order: 'asc' },
        { column: 'rb.uid', order: 'asc' },
      ])) as BindingRow[];
    return found.map(toGrant);
  }

  async conditionalGranting(
    tx: Tx,
    groupUid: string,
    cap: Capability,
    seen: SeenBy,
    limit: number,
  ): Promise<{ bindings: BindingGrant[]; more: boolean }> {
    // Those who hold it unconditionally (as the caller counts them) are who-can's holders.
    const unconditional = granting(tx, groupUid, cap, seen).select('rb.identity_uid');
    const who = (await onPath(tx, groupUid, cap, seen, LIVE_CONDITIONAL)
      .whereNotIn('rb.identity_uid', unconditional)
      .distinct('rb.identity_uid')
      .orderBy('rb.identity_uid', 'asc')
      .limit(limit + 1)) as { identity_uid: string }[];
    const uids = who.slice(0, limit).map((r) => r.identity_uid);
    if (uids.length === 0) return { bindings: [], more: false };
    const found = (await onPath(tx, groupUid, cap, seen, LIVE_CONDITIONAL)
      .whereIn('rb.identity_uid', uids)
      .select(kx(tx).raw(BINDING_COLUMNS))
      .orderBy([
        { column: 'rb.identity_uid', order: 'asc' },
        { column: 'rb.uid', order: 'asc' },
      ])) as BindingRow[];
    return { bindings: found.map(toGrant), more: who.length > limit };
  }

  async delegationPolicies(tx: Tx, identityUids: readonly string[]): Promise<StoredDelegation[]> {
    if (identityUids.length === 0) return [];
    const found = (await kx(tx)('delegation_policies')
      .whereIn('identity_uid', [...identityUids])
      .select('identity_uid', 'actors', 'capabilities', 'max_lifetime_seconds')
      .orderBy('identity_uid', 'asc')) as {
      identity_uid: string;
      actors: string[] | string;
      capabilities: string[] | string;
      max_lifetime_seconds: number;
    }[];
    return found.map((r) => ({
      identityUid: r.identity_uid,
      actors: jsonList(r.actors),
      capabilities: jsonList(r.capabilities) as Capability[],
      maxLifetimeSeconds: r.max_lifetime_seconds,
    }));
  }
}

/** jsonb arrives parsed from node-postgres, and may arrive as text elsewhere (pglite). */
const jsonList = (v: string[] | string): string[] =>
  typeof v === 'string' ? (JSON.parse(v) as string[]) : v;

/**
 * Live bindings at `groupUid` or above whose role holds `cap`, that count for the caller:
 * its own, or where it may list role bindings, of identities it may list (or itself).
 */
function granting(tx: Tx, groupUid: string, cap: Capability, seen: SeenBy): Knex.QueryBuilder {
  return onPath(tx, groupUid, cap, seen, LIVE_UNCONDITIONAL);
}

/** `granting`'s bindings, of the kind `which` keeps (unconditional or conditional). */
function onPath(
  tx: Tx,
  groupUid: string,
  cap: Capability,
  seen: SeenBy,
  which: string,
): Knex.QueryBuilder {
  const q = kx(tx)('role_bindings as rb')
    .join('roles as r', 'r.uid', 'rb.role_uid')
    .whereIn('rb.parent_uid', ancestryOf(groupUid))
    .whereRaw('r.capabilities @> ?::jsonb', [JSON.stringify([cap])])
    .whereRaw(which);
  return visibleTo(q, seen);
}

/** The bindings that count for the caller: its own, or visible ones of visible identities. */
function visibleTo(q: Knex.QueryBuilder, seen: SeenBy): Knex.QueryBuilder {
  const self = seen.self;
  const either = (column: string, vis: SeenBy['bindings']) => (w: Knex.QueryBuilder) => {
    if (self !== undefined)
      w.where('rb.identity_uid', self).orWhere((v) => whereVisible(v, column, vis));
    else whereVisible(w, column, vis);
  };
  if (seen.bindings.kind !== 'all') q.where(either('rb.uid', seen.bindings));
  if (seen.identities.kind !== 'all') q.where(either('rb.identity_uid', seen.identities));
  return q;
}

/**
 * When the first scheduled binding (not started, not expired) of `roles` on the asked
 * group's ancestry that would count for the caller starts; undefined: none is scheduled.
 */
async function firstStart(
  tx: Tx,
  groupUid: string,
  roles: readonly string[],
  seen: SeenBy,
): Promise<number | undefined> {
  const q = kx(tx)('role_bindings as rb')
    .whereIn('rb.parent_uid', ancestryOf(groupUid))
    .whereIn('rb.role_uid', [...roles])
    .whereRaw(`rb.not_before > now() AND ${UNEXPIRED} AND NOT rb.conditional`);
  const row = (await visibleTo(q, seen).min('rb.not_before as at').first()) as
    { at: Date | null } | undefined;
  return row?.at?.getTime();
}

/**
 * Who-can's statements by text. Their shape varies only with the ancestry's depth, the
 * number of roles and the caller's visibility, so there are few; each is prepared once per
 * connection (planning them cost several times their 0.1 ms execution). Bounded anyway.
 */
const SHAPES = new Map<string, Statement>();

function shaped(withMarks: string): Statement {
  let n = 0;
  const text = withMarks.replace(/\?/g, () => `$${++n}`);
  let st = SHAPES.get(text);
  if (st === undefined) {
    if (SHAPES.size >= 256) SHAPES.clear();
    st = new Statement(text);
    SHAPES.set(text, st);
  }
  return st;
}

/** Roles are few and their capabilities a jsonb array: this reads them all at most. */
const ROLES_HOLDING = new Statement('SELECT uid FROM roles WHERE capabilities @> $1::jsonb');

async function rolesHolding(tx: Tx, cap: Capability): Promise<string[]> {
  const rows = await ROLES_HOLDING.rows<{ uid: string }>(kx(tx), [JSON.stringify([cap])]);
  return rows.map((r) => r.uid);
}

/**
 * The identity uids of the live bindings of `roles` that count for the caller, one
 * parenthesised branch per group of the ancestry, each in identity order (`UNION ALL`:
 * the caller merges and de-duplicates). `narrow` adds a condition to every branch;
 * `withExpiry` selects each binding's `expire_time` too.
 */
function holders(
  tx: Tx,
  groupUid: string,
  roles: readonly string[],
  seen: SeenBy,
  desc: boolean,
  narrow: (b: Knex.QueryBuilder) => void = () => {},
  withExpiry = false,
): { sql: string; bindings: readonly Knex.Value[] } {
  const parts = ancestryOf(groupUid).map((parent) => {
    const b = kx(tx)('role_bindings as rb')
      .select(withExpiry ? ['rb.identity_uid', 'rb.expire_time'] : ['rb.identity_uid'])
      .where('rb.parent_uid', parent)
      .whereIn('rb.role_uid', [...roles])
      .whereRaw(LIVE_UNCONDITIONAL);
    visibleTo(b, seen);
    narrow(b);
    return b.orderBy('rb.identity_uid', desc ? 'desc' : 'asc').toSQL();
  });
  return {
    sql: parts.map((p) => `(${p.sql})`).join(' UNION ALL '),
    bindings: parts.flatMap((p) => p.bindings),
  };
}
