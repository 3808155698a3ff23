import type { BindingGrant } from '../../resources/access/access-store.js';
import type { RoleFacts, SimulationStore } from '../../resources/access/simulation-store.js';
import type { Tx } from '../../resources/tx.js';
import { whereBelow } from '../keyset.js';
import { kx } from '../unit-of-work.js';
import { toGrant, type BindingRow } from './access-store.js';
import { storedCapabilities } from './role-store.js';

/** Rows per `IN (…)`: far below PostgreSQL's 65,535 parameters. */
const CHUNK = 1_000;

async function chunked<T>(
  uids: readonly string[],
  each: (part: string[]) => Promise<T[]>,
): Promise<T[]> {
  const out: T[] = [];
  const distinct = [...new Set(uids)];
  for (let i = 0; i < distinct.length; i += CHUNK)
    out.push(...(await each(distinct.slice(i, i + CHUNK))));
  return out;
}

const bindingColumns = [
  'rb.uid',
  'rb.parent_uid',
  'rb.identity_uid',
  'rb.role_uid',
  'r.name as role_name',
  'r.description as role_description',
  'r.capabilities',
  'rb.expire_time',
  'rb.not_before',
];

export class KnexSimulationStore implements SimulationStore {
  async now(tx: Tx): Promise<number> {
    const res = (await kx(tx).raw('SELECT now() AS now')) as { rows: { now: Date }[] };
    return res.rows[0]!.now.getTime();
  }

  async existingGroups(tx: Tx, uids: readonly string[]): Promise<Set<string>> {
    return this.existing(tx, 'groups', uids);
  }

  async existingIdentities(tx: Tx, uids: readonly string[]): Promise<Set<string>> {
    return this.existing(tx, 'identities', uids);
  }

  private async existing(tx: Tx, table: string, uids: readonly string[]): Promise<Set<string>> {
    const found = await chunked(
      uids,
      (part) => kx(tx)(table).whereIn('uid', part).select('uid') as Promise<{ uid: string }[]>,
    );
    return new Set(found.map((r) => r.uid));
  }

  async roles(tx: Tx, uids: readonly string[]): Promise<Map<string, RoleFacts>> {
    const found = await chunked(
      uids,
      (part) =>
        kx(tx)('roles')
          .whereIn('uid', part)
          .select('uid', 'name', 'description', 'capabilities') as Promise<
          { uid: string; name: string; description: string; capabilities: unknown }[]
        >,
    );
    return new Map(
      found.map((r) => [
        r.uid,
        {
          ref: { uid: r.uid, name: r.name, description: r.description },
          capabilities: storedCapabilities(r.capabilities),
        },
      ]),
    );
  }

  async bindings(tx: Tx, uids: readonly string[]): Promise<BindingGrant[]> {
    return this.bindingsWhere(tx, 'rb.uid', uids);
  }

  async bindingsOfIdentities(tx: Tx, identityUids: readonly string[]): Promise<BindingGrant[]> {
    return this.bindingsWhere(tx, 'rb.identity_uid', identityUids);
  }

  private async bindingsWhere(
    tx: Tx,
    column: string,
    values: readonly string[],
  ): Promise<BindingGrant[]> {
    const found = await chunked(
      values,
      (part) =>
        kx(tx)('role_bindings as rb')
          .join('roles as r', 'r.uid', 'rb.role_uid')
          .whereIn(column, part)
          .select(bindingColumns) as Promise<BindingRow[]>,
    );
    return found.map(toGrant).sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  }

  async names(tx: Tx, uids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const table of ['groups', 'identities']) {
      const found = await chunked(
        uids,
        (part) =>
          kx(tx)(table).whereIn('uid', part).select('uid', 'name') as Promise<
            { uid: string; name: string }[]
          >,
      );
      for (const r of found) out.set(r.uid, r.name);
    }
    return out;
  }

  async identitiesBoundTo(tx: Tx, roleUids: readonly string[]): Promise<string[]> {
    const found = await chunked(
      roleUids,
      (part) =>
        kx(tx)('role_bindings').whereIn('role_uid', part).distinct('identity_uid') as Promise<
          { identity_uid: string }[]
        >,
    );
    return [...new Set(found.map((r) => r.identity_uid))];
  }

  async identitiesUnder(tx: Tx, groupUid: string): Promise<string[]> {
    const below = (await whereBelow(kx(tx)('identities'), 'uid', groupUid).select('uid')) as {
      uid: string;
    }[];
    const bound = (await kx(tx)('role_bindings')
      .where((w) => {
        w.where('parent_uid', groupUid).orWhere((r) => whereBelow(r, 'parent_uid', groupUid));
      })
      .distinct('identity_uid')) as { identity_uid: string }[];
    return [...new Set([...below.map((r) => r.uid), ...bound.map((r) => r.identity_uid)])];
  }
}
