import type { Authorizer } from '../../auth/authorizer.js';
import { newChildUid, newRootUid } from '../../core/uidp.js';
import type { UnitOfWork } from '../tx.js';
import type { LoginIdp, Person, UserStore } from './user-store.js';

/** An OIDC client people sign in with: the server's own, or an organization's IdP. */
export interface LoginProvider {
  issuer: string;
  clientId: string;
  /** Set for an organization's IdentityProvider: its default role applies on sign-in. */
  idp?: LoginIdp;
}

export interface UserServiceDeps {
  uow: UnitOfWork;
  users: UserStore;
  authz: Authorizer;
  /** ARBOR_LOGIN_ISSUER + ARBOR_LOGIN_CLIENT_ID, when configured. */
  serverProvider?: { issuer: string; clientId: string };
}

/**
 * People (spec §5.2). A person is a root-level user identity keyed by the exact
 * `(issuer, subject)` a trusted provider vouches for; it is registered on first sign-in
 * and found afterwards. Nothing here verifies tokens: `auth/user-sign-in.ts` does that
 * and calls in only with a verified person.
 */
export class UserService {
  constructor(private readonly d: UserServiceDeps) {}

  /** Providers trusted for `issuer`: the server's, and every organization IdP naming it. */
  async providersFor(issuer: string): Promise<LoginProvider[]> {
    const out: LoginProvider[] = [];
    const server = this.d.serverProvider;
    if (server && server.issuer === issuer) out.push({ ...server });
    const idps = await this.d.uow.read((tx) => this.d.users.idpsForIssuer(tx, issuer));
    for (const idp of idps) out.push({ issuer, clientId: idp.clientId, idp });
    return out;
  }

  /**
   * Find or register the person, and bind the default role of each organization IdP they
   * signed in through at that IdP's group (once; a binding that exists stays as it is).
   * `via` must be providers the token was verified for. @returns the identity uid.
   */
  async signIn(person: Person, via: LoginProvider[]): Promise<string> {
    let bound = false;
    const uid = await this.d.uow.run(async (tx) => {
      const existing = await this.d.users.findUser(tx, person.issuer, person.subject);
      const id = existing ?? (await this.d.users.ensureUser(tx, newRootUid(), person));
      for (const p of via) {
        if (!p.idp) continue;
        const made = await this.d.users.ensureBinding(tx, {
          uid: newChildUid(p.idp.groupUid),
          groupUid: p.idp.groupUid,
          identityUid: id,
          roleUid: p.idp.defaultRoleUid,
        });
        bound ||= made;
      }
      return id;
    });
    if (bound) this.d.authz.grantsChanged();
    return uid;
  }
}
