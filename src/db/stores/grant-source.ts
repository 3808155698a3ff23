import type { Grant, GrantBinding, GrantSource } from '../../auth/authorizer.js';
import type { Capability } from '../../auth/capabilities.js';
import { brokenCondition, compileCondition, type CompiledCondition } from '../../auth/condition.js';
import type { Tx, UnitOfWork } from '../../resources/tx.js';
import { Statement } from '../prepared.js';
import { kx } from '../unit-of-work.js';
import { BINDING_COLUMNS, BINDING_FROM, toGrant, type BindingRow } from './access-store.js';

/** Runs whenever an identity's grants are not remembered: a fixed, prepared statement. */
const GRANTS = new Statement(
  `SELECT ${BINDING_COLUMNS} FROM ${BINDING_FROM}
    WHERE rb.identity_uid = $1 AND (rb.expire_time IS NULL OR rb.expire_time > now())`,
);

/**
 * What an identity holds: one query over its unexpired role bindings joined to their
 * roles, one grant per group and window it is bound at (several roles at one group with
 * the same window are merged, and it names them all). Each grant carries its window, so a
 * remembered grant lapses and, when scheduled (`not_before`), begins on time (`Authorizer`
 * checks it on every decision); scheduled bindings are read before they start for that reason.
 */
export class KnexGrantSource implements GrantSource {
  constructor(private readonly uow: UnitOfWork) {}

  grantsOf(identityUid: string): Promise<Grant[]> {
    return this.uow.read((tx) => grantsOfIdentity(tx, identityUid));
  }
}

/**
 * The grants an identity's role bindings give it, read in `tx` (so a caller holding the
 * identity's row lock sees a set no concurrent binding can change before it commits).
 */
export async function grantsOfIdentity(tx: Tx, identityUid: string): Promise<Grant[]> {
  const bindings = (await GRANTS.rows<BindingRow>(kx(tx), [identityUid])).map(toGrant);
  const byKey = new Map<
    string,
    Grant & { capabilities: Set<Capability>; bindings: GrantBinding[] }
  >();
  const out: Grant[] = [];
  for (const b of bindings) {
    const { expiresAt, startsAt } = b;
    if (b.condition !== undefined) {
      // A conditional binding is a grant of its own: its condition decides for it alone.
      const compiled = compiledOrBroken(b.condition.expression);
      const own = new Set(b.capabilities);
      out.push({
        scope: b.groupUid,
        capabilities: own,
        bindings: [{ uid: b.uid, capabilities: own }],
        condition: { bindingUid: b.uid, compiled },
        ...(expiresAt === undefined ? {} : { expiresAt }),
        ...(startsAt === undefined ? {} : { startsAt }),
      });
      continue;
    }
    const key = `${b.groupUid}\0${expiresAt ?? ''}\0${startsAt ?? ''}`;
    let g = byKey.get(key);
    if (!g) {
      g = {
        scope: b.groupUid,
        capabilities: new Set(),
        bindings: [],
        ...(expiresAt === undefined ? {} : { expiresAt }),
        ...(startsAt === undefined ? {} : { startsAt }),
      };
      byKey.set(key, g);
    }
    const own = new Set(b.capabilities);
    for (const c of own) g.capabilities.add(c);
    g.bindings.push({ uid: b.uid, capabilities: own });
  }
  return [...byKey.values(), ...out];
}

/**
 * A stored condition compiled (cached by text). One that no longer compiles (the
 * environment changed under it) evaluates to an error, which denies and is logged.
 */
function compiledOrBroken(expression: string): CompiledCondition {
  try {
    return compileCondition(expression);
  } catch (err) {
    return brokenCondition(expression, err instanceof Error ? err.message : String(err));
  }
}
