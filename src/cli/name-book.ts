import { call, type Session } from './api-session.js';
import type { Item } from './resource-kinds.js';

/** What a table shows for a group or identity nobody may read here: its uid's first characters. */
const unseen = (uid: string) => uid.slice(uid.lastIndexOf('/') + 1, uid.lastIndexOf('/') + 9);

/**
 * Names for the uids an answer carries, for people: each group and identity read once
 * (by its Get, so only what the caller may see is named; anything else keeps a short uid).
 * Paths are names from the organization down: `acme/platform/sre`.
 */
export class NameBook {
  readonly #names = new Map<string, Promise<string | undefined>>();

  constructor(private readonly s: Session) {}

  #name(path: string, uid: string): Promise<string | undefined> {
    const key = `${path}|${uid}`;
    let name = this.#names.get(key);
    if (!name) {
      name = call<Item>(this.s, 'GET', path, { params: { path: { uid } } }).then(
        (r) => (typeof r.name === 'string' && r.name !== '' ? r.name : undefined),
        () => undefined,
      );
      this.#names.set(key, name);
    }
    return name;
  }

  /** `acme/platform/sre` for the group with this uid path (`abc…/def…/012…`). */
  async groupPath(uid: string): Promise<string> {
    const segments = uid.split('/');
    const names = await Promise.all(
      segments.map(async (_, k) => {
        const prefix = segments.slice(0, k + 1).join('/');
        return (await this.#name('/iam/v2beta1/groups/{uid}', prefix)) ?? unseen(prefix);
      }),
    );
    return names.join('/');
  }

  /** `acme/platform/ci` for an identity: its group's path, then its name. */
  async identityPath(uid: string, known?: string): Promise<string> {
    const cut = uid.lastIndexOf('/');
    const name = known || (await this.#name('/iam/v2beta1/identities/{uid}', uid)) || unseen(uid);
    return cut < 0 ? name : `${await this.groupPath(uid.slice(0, cut))}/${name}`;
  }

  /** A built-in role's name; a custom role's group path, then its name (`acme/deployer`). */
  async rolePath(uid: string): Promise<string> {
    const cut = uid.lastIndexOf('/');
    const name = (await this.#name('/iam/v2beta1/roles/{uid}', uid)) ?? unseen(uid);
    return cut < 0 ? name : `${await this.groupPath(uid.slice(0, cut))}/${name}`;
  }

  /** `identity:<uid>` → `identity acme/ci`; `admin`, `system:…` as they are. */
  async actor(actor: string): Promise<string> {
    return actor.startsWith('identity:')
      ? this.identityPath(actor.slice('identity:'.length))
      : actor;
  }
}
