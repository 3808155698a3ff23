import type { Authorizer } from '../../auth/authorizer.js';
import { withVia } from '../../auth/principal.js';
import { newChildUid, newRootUid } from '../../core/uidp.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import { IDENTITY_TYPE } from '../identities/identity.js';
import type { IdentityStore } from '../identities/identity-store.js';
import { ROLE_BINDING_TYPE } from '../role-bindings/role-binding.js';
import type { RoleBindingStore } from '../role-bindings/role-binding-store.js';
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
  /** Records registrations and default-role bindings in the audit trail, read back by these. */
  audit?: { recorder: ChangeRecorder; identities: IdentityStore; bindings: RoleBindingStore };
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
      const fresh = newRootUid();
      const id = existing ?? (await this.d.users.ensureUser(tx, fresh, person));
      // The person acts, through the STS, in what sign-in writes for them.
      const actor = withVia({ kind: 'identity', uid: id }, { door: 'sts' });
      const a = this.d.audit;
      // A concurrent first sign-in may have registered them: only the winner records it.
      if (a && id === fresh) {
        const after = await a.identities.get(tx, id);
        await a.recorder.record(tx, actor, {
          type: IDENTITY_TYPE,
          operation: 'create',
          uid: id,
          after,
        });
      }
      for (const p of via) {
        if (!p.idp) continue;
        const bindingUid = newChildUid(p.idp.groupUid);
        const made = await this.d.users.ensureBinding(tx, {
          uid: bindingUid,
          groupUid: p.idp.groupUid,
          identityUid: id,
          roleUid: p.idp.defaultRoleUid,
        });
        if (made && a) {
          const after = await a.bindings.get(tx, bindingUid);
          await a.recorder.record(tx, actor, {
            type: ROLE_BINDING_TYPE,
            operation: 'create',
            uid: bindingUid,
            after,
          });
        }
        bound ||= made;
      }
      return id;
    });
    if (bound) this.d.authz.grantsChanged();
    return uid;
  }
}
