import type { Logger } from 'pino';
import type { ConditionDeps } from '../../auth/authorizer.js';
import { ancestryOf } from '../../core/uidp.js';
import type { ReadCache } from '../read-cache.js';
import type { UnitOfWork } from '../tx.js';
import type { NameStore } from './name-store.js';

/** A resource's nearest group and its path of names from its organization; none: undefined. */
export type ConditionGroup = { uid: string; path: string } | undefined;

/**
 * What the authorizer needs to evaluate conditions: a resource's group (the nearest group
 * on its uid path) with its full path of names from its organization, read when a
 * conditional grant whose expression reads `resource.group` is about to decide, and where
 * evaluation errors are logged.
 *
 * `cache`: answers kept across requests, by the resource's uid. It must forget everything
 * on any change to any group (a rename or removal of an ancestor changes the paths below
 * it, which no single key names): the change feed's derived cache of kind `g` does
 * (read-caches.ts), and serves only while the feed vouches that every committed change,
 * this process's own included, has been heard. Absent (no change feed): one statement per
 * decision, so a rename applies to the next decision.
 */
export function conditionDeps(
  uow: UnitOfWork,
  names: NameStore,
  logger: Logger,
  cache?: ReadCache<ConditionGroup>,
): ConditionDeps {
  const log = logger.child({ component: 'conditions' });
  const load = async (uid: string): Promise<ConditionGroup> => {
    const path = ancestryOf(uid);
    const found = await uow.read((tx) =>
      names.namesOf(tx, { groups: path, identities: [], roles: [] }),
    );
    const groups = path.filter((g) => found.groups.has(g));
    const nearest = groups[0];
    if (nearest === undefined) return undefined;
    // Every group from the organization down is a group: a uid path has no gaps.
    const down = ancestryOf(nearest).reverse();
    const named = down.map((g) => found.groups.get(g));
    if (named.some((n) => n === undefined)) return undefined;
    return { uid: nearest, path: named.join('/') };
  };
  return {
    // Always from the primary (uow.read), kept or not: a decision never reads a lagging replica.
    groupOf: (uid) => (cache ? cache.read(uid, () => load(uid)) : load(uid)),
    log: (fields) =>
      log.warn(fields, 'role binding condition failed to evaluate: the binding did not grant'),
  };
}
