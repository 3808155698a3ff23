import type { Authorizer } from '../../auth/authorizer.js';
import { withVia } from '../../auth/principal.js';
import { permissionDenied, resourceExhausted } from '../../core/rpc-error.js';
import { newChildUid, newRootUid } from '../../core/uidp.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import { IDENTITY_TYPE } from '../identities/identity.js';
import type { IdentityStore } from '../identities/identity-store.js';
import { ROLE_BINDING_TYPE } from '../role-bindings/role-binding.js';
import type { RoleBindingStore } from '../role-bindings/role-binding-store.js';
import type { Tx, UnitOfWork } from '../tx.js';
import type { LoginIdp, Person, UserStore } from './user-store.js';

/** `sign_in_provider` of the people the server's own login client registers. */
export const SERVER_PROVIDER = 'server';

const GONE = 'no trusted identity provider vouches for this token';

/** Default bound on the people one organization IdP may register. */
export const DEFAULT_MAX_PEOPLE_PER_PROVIDER = 10_000;

/** An OIDC client people sign in with: the server's own, or an organization's IdP. */
export interface LoginProvider {
  /** `server`, or the organization IdP's uid: the provider a person's identity belongs to. */
  ref: string;
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
  serverProvider?: { issuer: string; clientId: string } | undefined;
  /** ARBOR_MAX_PEOPLE_PER_PROVIDER: people one organization IdP may register. */
  maxPeoplePerProvider?: number;
  /** Records registrations and default-role bindings in the audit trail, read back by these. */
  audit: { recorder: ChangeRecorder; identities: IdentityStore; bindings: RoleBindingStore };
}

/** Issuers compare without trailing slashes, as ARBOR_LOGIN_ISSUER is read. */
function sameIssuer(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

/**
 * Whether `(issuer, clientId)` is the server's own login client: no organization's IdP may
 * name it, or it would register — and bind its default role to — everyone who signs in to
 * Arbor, and show its owner their names and subjects.
 */
export function isServerClient(
  server: { issuer: string; clientId: string } | undefined,
  issuer: string,
  clientId: string,
): boolean {
  return server !== undefined && server.clientId === clientId && sameIssuer(server.issuer, issuer);
}

/**
 * People (spec §5.2). A person's user identity belongs to the provider that registered it
 * and is keyed by `(provider, issuer, subject)`: the server login client's people are
 * root-level identities; an organization IdP's people live under the IdP's group, so the
 * same placement rules as any identity keep them, and their bindings, inside that
 * organization. Only the registering provider signs a person in (docs/sign-in.md). Nothing
 * here verifies tokens: `auth/user-sign-in.ts` and the STS do that, and call in only with
 * a verified person.
 */
export class UserService {
  constructor(private readonly d: UserServiceDeps) {}

  /**
   * Providers trusted for `issuer`: the server's, and every organization IdP naming it,
   * except one that names the server's own client (refused at create since, but a row from
   * before must not speak for the server's people either).
   */
  async providersFor(issuer: string): Promise<LoginProvider[]> {
    const out: LoginProvider[] = [];
    const server = this.d.serverProvider;
    if (server && sameIssuer(server.issuer, issuer))
      out.push({ ref: SERVER_PROVIDER, issuer, clientId: server.clientId });
    const idps = await this.d.uow.read((tx) => this.d.users.idpsForIssuer(tx, issuer));
    for (const idp of idps) {
      if (isServerClient(server, idp.issuer, idp.clientId)) continue;
      out.push({ ref: idp.uid, issuer, clientId: idp.clientId, idp });
    }
    return out;
  }

  /**
   * The provider a person's identity belongs to, as it is configured now: what the STS
   * holds a token to when it names that identity. undefined: not a person's identity, or
   * its provider is gone or no longer allowed.
   */
  async providerOf(ref: string): Promise<LoginProvider | undefined> {
    const server = this.d.serverProvider;
    if (ref === SERVER_PROVIDER) return server && { ref, ...server };
    const idp = await this.d.uow.read((tx) => this.d.users.idp(tx, ref));
    if (!idp || isServerClient(server, idp.issuer, idp.clientId)) return undefined;
    return { ref, issuer: idp.issuer, clientId: idp.clientId, idp };
  }

  /**
   * Find or register the person as `via`'s, and bind an organization IdP's default role at
   * its group (once; a binding that exists stays as it is). `via` must be the provider the
   * token was verified for. @returns the identity uid.
   * @throws RpcError RESOURCE_EXHAUSTED when an organization IdP has registered as many
   *   people as it may (ARBOR_MAX_PEOPLE_PER_PROVIDER); PERMISSION_DENIED when the IdP
   *   was deleted since the token was checked.
   */
  async signIn(person: Person, via: LoginProvider): Promise<string> {
    let bound = false;
    const uid = await this.d.uow.run(async (tx) => {
      const existing = await this.d.users.findUser(tx, via.ref, person.issuer, person.subject);
      const fresh = via.idp ? newChildUid(via.idp.groupUid) : newRootUid();
      const id = existing ?? (await this.register(tx, fresh, person, via));
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
      if (!via.idp) return id;
      const bindingUid = newChildUid(via.idp.groupUid);
      const made = await this.d.users.ensureBinding(tx, {
        uid: bindingUid,
        groupUid: via.idp.groupUid,
        identityUid: id,
        roleUid: via.idp.defaultRoleUid,
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
      bound = made;
      return id;
    });
    if (bound) this.d.authz.grantsChanged();
    return uid;
  }

  /**
   * A first sign-in. Through an organization IdP, registrations are counted under the IdP's
   * row lock, so concurrent sign-ins cannot overshoot the bound.
   */
  private async register(tx: Tx, uid: string, person: Person, via: LoginProvider): Promise<string> {
    if (!via.idp)
      return this.d.users.ensureUser(tx, { uid, parentUid: null, provider: via.ref }, person);
    // Deleted since the token was checked: it registers no one any more.
    if (!(await this.d.users.lockIdp(tx, via.idp.uid))) throw permissionDenied(GONE);
    // Under the lock: a sign-in that registered the person meanwhile is found, not counted.
    const found = await this.d.users.findUser(tx, via.ref, person.issuer, person.subject);
    if (found) return found;
    const max = this.d.maxPeoplePerProvider ?? DEFAULT_MAX_PEOPLE_PER_PROVIDER;
    if ((await this.d.users.countPeople(tx, via.ref)) >= max)
      throw resourceExhausted('this identity provider has registered as many people as it may');
    return this.d.users.ensureUser(
      tx,
      { uid, parentUid: via.idp.groupUid, provider: via.ref },
      person,
    );
  }
}
