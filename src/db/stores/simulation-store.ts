import { resourceExhausted } from '../../core/rpc-error.js';
import type { Visibility } from '../../core/visibility.js';
import type { Capability } from '../../auth/capabilities.js';
import type {
  GroupFacts,
  PolicyFacts,
  RoleFacts,
  SimulatedBindingFacts,
  SimulationAsk,
  SimulationFacts,
  SimulationLimits,
  SimulationStore,
} from '../../resources/access/simulation-store.js';
import type { Tx } from '../../resources/tx.js';
import { kx } from '../unit-of-work.js';
import { BINDING_COLUMNS, BINDING_FROM, toGrant, type BindingRow } from './access-store.js';
import { storedCapabilities } from './role-store.js';

/**
 * A list of uids as one parameter (a JSON array), so a statement has the same text and
 * one parameter whatever the list's length: no `IN (…)` growing with it, no chunks.
 */
const list = (uids: readonly string[]): string => JSON.stringify([...new Set(uids)]);
const IN = (param: string) => `(SELECT value FROM jsonb_array_elements_text(${param}::jsonb))`;

/** `col` strictly below the uid `anc` (C-collated columns: an index range). */
const below = (col: string, anc: string) => `(${col} >= ${anc} || '/' AND ${col} < ${anc} || '0')`;

/**
 * `col` at or below one of the scopes in `param` (a JSON array; null: everywhere), as
 * `whereVisible` decides. `param` is used twice: bind it twice.
 */
const within = (col: string, param: string) =>
  `(${param}::jsonb IS NULL OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(${param}::jsonb) s
     WHERE ${col} = s.value OR ${below(col, 's.value')}))`;

const twice = <T>(x: T): [T, T] => [x, x];

/** A visibility as `within`'s parameter. */
const scopes = (v: Visibility): string | null =>
  v.kind === 'all' ? null : JSON.stringify(v.scopes);

/** The named groups (with what their delete decides on), the named roles, and `now()`. */
const NAMED = `
  SELECT now() AS now,
    (SELECT coalesce(jsonb_agg(jsonb_build_object(
        'uid', g.uid,
        'managedBy', g.managed_by,
        'managedBelow', (SELECT s.managed_by FROM groups s
                          WHERE ${below('s.uid', 'g.uid')} AND s.managed_by IS NOT NULL
                          LIMIT 1),
        'rolesBelow', EXISTS (SELECT 1 FROM roles r WHERE ${below('r.uid', 'g.uid')})
      )), '[]'::jsonb)
       FROM groups g WHERE g.uid IN ${IN('?')}) AS groups,
    (SELECT coalesce(jsonb_agg(jsonb_build_object(
        'uid', r.uid, 'name', r.name, 'description', r.description,
        'capabilities', r.capabilities)), '[]'::jsonb)
       FROM roles r WHERE r.uid IN ${IN('?')}) AS roles`;

/**
 * The identities the set touches, with their managers: those it names, those whose binding
 * it deletes, those bound to a role it edits, those below a group it deletes and those
 * bound at or below one, and those it names hidden that are bound where the caller binds
 * by a binding it may list (`SimulationAsk.referred`). At most `limit` rows (one more
 * tells the bound was passed).
 */
const TOUCHED = `
  WITH d AS ${IN('?')}
  SELECT i.uid, i.managed_by FROM identities i
   WHERE i.uid IN (
     SELECT value FROM jsonb_array_elements_text(?::jsonb)
     UNION SELECT rb.identity_uid FROM role_bindings rb WHERE rb.uid IN ${IN('?')}
     UNION SELECT rb.identity_uid FROM role_bindings rb WHERE rb.role_uid IN ${IN('?')}
     UNION SELECT x.uid FROM d JOIN identities x ON ${below('x.uid', 'd.value')}
     UNION SELECT rb.identity_uid FROM d JOIN role_bindings rb
             ON rb.parent_uid = d.value OR ${below('rb.parent_uid', 'd.value')}
     UNION SELECT rb.identity_uid FROM role_bindings rb
            WHERE rb.identity_uid IN ${IN('?')}
              AND ${within('rb.parent_uid', '?')} AND ${within('rb.uid', '?')})
   LIMIT ?`;

/** Every binding (expired and scheduled too) of the identities touched, at most `limit`. */
const BINDINGS = `
  SELECT ${BINDING_COLUMNS}, rb.managed_by FROM ${BINDING_FROM}
   WHERE rb.identity_uid IN ${IN('?')}
   LIMIT ?`;

/** The delegation policies of the identities touched, where the caller may read them. */
const POLICIES = `
  SELECT identity_uid, actors, capabilities, max_lifetime_seconds FROM delegation_policies
   WHERE identity_uid IN ${IN('?')}
     AND ${within('identity_uid', '?')} AND ${within('identity_uid', '?')}`;

/** jsonb arrives parsed from node-postgres, and may arrive as text elsewhere. */
const strings = (v: unknown): string[] =>
  typeof v === 'string' ? (JSON.parse(v) as string[]) : (v as string[]);

const NAMES = `
  SELECT uid, name FROM groups WHERE uid IN ${IN('?')}
  UNION ALL SELECT uid, name FROM identities WHERE uid IN ${IN('?')}`;

interface NamedRow {
  now: Date;
  groups: ({ uid: string } & GroupFacts)[];
  roles: { uid: string; name: string; description: string; capabilities: unknown }[];
}

export class KnexSimulationStore implements SimulationStore {
  async read(tx: Tx, ask: SimulationAsk, limits: SimulationLimits): Promise<SimulationFacts> {
    const k = kx(tx);
    const named = (
      (await k.raw(NAMED, [list(ask.groups), list(ask.roles)])) as { rows: NamedRow[] }
    ).rows[0]!;
    const touched = (
      (await k.raw(TOUCHED, [
        list(ask.deletedGroups),
        list(ask.identities),
        list(ask.bindings),
        list(ask.editedRoles),
        list(ask.referred?.identities ?? []),
        ...twice(ask.referred === undefined ? '[]' : scopes(ask.referred.within.at)),
        ...twice(ask.referred === undefined ? '[]' : scopes(ask.referred.within.seen)),
        limits.identities + 1,
      ])) as { rows: { uid: string; managed_by: string | null }[] }
    ).rows;
    if (touched.length > limits.identities)
      throw resourceExhausted(
        `the change set touches more than ${limits.identities} identities, the most one simulation reads`,
      );
    const bindings = (
      (await k.raw(BINDINGS, [list(touched.map((r) => r.uid)), limits.bindings + 1])) as {
        rows: (BindingRow & { managed_by: string | null })[];
      }
    ).rows;
    if (bindings.length > limits.bindings)
      throw resourceExhausted(
        `the change set touches more than ${limits.bindings} role bindings, the most one simulation reads`,
      );
    const policies = (
      (await k.raw(POLICIES, [
        list(touched.map((r) => r.uid)),
        ...twice(scopes(ask.policies.listed)),
        ...twice(scopes(ask.policies.updated)),
      ])) as {
        rows: {
          identity_uid: string;
          actors: unknown;
          capabilities: unknown;
          max_lifetime_seconds: number;
        }[];
      }
    ).rows;
    return {
      now: named.now.getTime(),
      policies: new Map(
        policies.map((r): [string, PolicyFacts] => [
          r.identity_uid,
          {
            actors: strings(r.actors),
            capabilities: strings(r.capabilities) as Capability[],
            maxLifetimeSeconds: r.max_lifetime_seconds,
          },
        ]),
      ),
      groups: new Map(
        named.groups.map((g) => [
          g.uid,
          { managedBy: g.managedBy, managedBelow: g.managedBelow, rolesBelow: g.rolesBelow },
        ]),
      ),
      identities: new Map(touched.map((r) => [r.uid, r.managed_by])),
      roles: new Map(
        named.roles.map((r): [string, RoleFacts] => [
          r.uid,
          {
            ref: { uid: r.uid, name: r.name, description: r.description },
            capabilities: storedCapabilities(r.capabilities),
          },
        ]),
      ),
      bindings: bindings
        .map((r): SimulatedBindingFacts => ({ ...toGrant(r), managedBy: r.managed_by }))
        .sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0)),
    };
  }

  async names(tx: Tx, uids: readonly string[]): Promise<Map<string, string>> {
    if (uids.length === 0) return new Map();
    const res = (await kx(tx).raw(NAMES, [list(uids), list(uids)])) as {
      rows: { uid: string; name: string }[];
    };
    return new Map(res.rows.map((r) => [r.uid, r.name]));
  }
}
