import type { Logger } from 'pino';
import type { ConditionDeps } from '../../auth/authorizer.js';
import { ancestryOf } from '../../core/uidp.js';
import type { UnitOfWork } from '../tx.js';
import type { NameStore } from './name-store.js';

/**
 * What the authorizer needs to evaluate conditions: a resource's group (the nearest group
 * on its uid path) with its full path of names from its organization, read when a
 * conditional grant is about to decide (one statement, not remembered: a rename applies
 * to the next decision), and where evaluation errors are logged.
 */
export function conditionDeps(uow: UnitOfWork, names: NameStore, logger: Logger): ConditionDeps {
  const log = logger.child({ component: 'conditions' });
  return {
    async groupOf(uid) {
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
    },
    log: (fields) =>
      log.warn(fields, 'role binding condition failed to evaluate: the binding did not grant'),
  };
}
