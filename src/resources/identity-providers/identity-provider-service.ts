import type { Authorizer } from '../../auth/authorizer.js';
import { SecretBox } from '../../auth/secret-box.js';
import type { Capability } from '../../auth/capabilities.js';
import type { Principal } from '../../auth/principal.js';
import { parseMask, resolvePatch } from '../../core/field-mask.js';
import type { ListRequest } from '../../core/list-request.js';
import { invalidField, notFound } from '../../core/rpc-error.js';
import { newChildUid } from '../../core/uidp.js';
import { GROUP_TYPE } from '../groups/group.js';
import { requireUid } from '../groups/group-service.js';
import type { GroupStore } from '../groups/group-store.js';
import type { ChangeRecorder } from '../audit/audit-log.js';
import type { ListPager } from '../list-pager.js';
import type { ListPage } from '../list-types.js';
import type { UnitOfWork } from '../tx.js';
import { parseInput, withoutKeys } from '../validate.js';
import type { RoleStore } from '../roles/role-store.js';
import { isServerClient } from '../users/user-service.js';
import { requireGrantableRole } from './grantable-role.js';
import { IDP_LIST, IDP_TYPE, IDP_UPDATE, type IdentityProvider } from './identity-provider.js';
import {
  identityProviderSchemas,
  type IdentityProviderSchemas,
  type OidcInput,
} from './identity-provider-input.js';
import type { IdentityProviderPatchRow, IdentityProviderStore } from './identity-provider-store.js';

export interface IdentityProviderServiceDeps {
  uow: UnitOfWork;
  idps: IdentityProviderStore;
  groups: GroupStore;
  roles: Pick<RoleStore, 'get'>;
  authz: Authorizer;
  pager: ListPager;
  audit: ChangeRecorder;
  /** ARBOR_ALLOW_INSECURE_ISSUERS: accept `http://` issuers (development only). */
  allowInsecureIssuers: boolean;
  /** Seals client secrets before they reach the store (secrets at rest). */
  secrets: SecretBox;
  /** The server's own login client (ARBOR_LOGIN_ISSUER + ARBOR_LOGIN_CLIENT_ID): no IdP may claim it. */
  serverLogin?: { issuer: string; clientId: string } | undefined;
}

/** Associated data of a sealed client secret: it opens only as this IdP's secret. */
function secretContext(uid: string): string {
  return `identity_providers.oidc_client_secret:${uid}`;
}

type Body = Record<string, unknown>;

function oidcConfig(o: OidcInput) {
  return {
    issuer: o.issuer,
    clientId: o.clientId,
    additionalScopes: o.additionalScopes ?? [],
    pkceEnabled: o.pkceEnabled ?? false,
  };
}

/**
 * Identity providers of a group. An IdP promises its users a role binding (its default
 * role), so creating or changing one also needs `role_bindings.create` at the group.
 */
export class IdentityProviderService {
  /** The input schemas every create and update is parsed with (the API document shows them). */
  readonly schemas: IdentityProviderSchemas;

  constructor(private readonly d: IdentityProviderServiceDeps) {
    this.schemas = identityProviderSchemas(d.allowInsecureIssuers);
  }

  /**
   * An organization's IdP may not name the server's own login client: it would register
   * everyone who signs in to Arbor as its people (docs/sign-in.md).
   * @throws RpcError INVALID_ARGUMENT on `oidc.clientId`.
   */
  #notServerClient(oidc: OidcInput): void {
    if (isServerClient(this.d.serverLogin, oidc.issuer, oidc.clientId))
      throw invalidField(
        'oidc.clientId',
        "is the server's own login client; an organization's identity provider needs its own",
      );
  }

  /** The operation's capability and the escalation guard, both at `scope`. */
  private async requireWrite(
    p: Principal,
    cap: Capability,
    scope: string,
    see: Capability,
    type: string,
  ): Promise<void> {
    await this.d.authz.require(p, cap, scope, see, type);
    await this.d.authz.require(p, 'role_bindings.create', scope, see, type);
  }

  /**
   * Create an identity provider under `groupUid`.
   * @throws RpcError INVALID_ARGUMENT (fields, `defaultRole`), NOT_FOUND (group), PERMISSION_DENIED.
   */
  async create(p: Principal, groupUid: string | undefined, body: Body): Promise<IdentityProvider> {
    const group = requireUid(groupUid ?? '', 'parent');
    const input = parseInput(this.schemas.create, withoutKeys(body, IDP_UPDATE.outputOnly));
    this.#notServerClient(input.oidc);
    await this.requireWrite(p, 'identity_providers.create', group, 'groups.list', GROUP_TYPE);
    const uid = newChildUid(group);
    return this.d.uow.run(async (tx) => {
      if (!(await this.d.groups.get(tx, group))) throw notFound(GROUP_TYPE, group);
      await requireGrantableRole(this.d, p, tx, input.defaultRole, group, 'defaultRole');
      const idp = await this.d.idps.insert(tx, {
        uid,
        parentUid: group,
        name: input.name,
        description: input.description ?? '',
        defaultRole: input.defaultRole,
        oidc: oidcConfig(input.oidc),
        sealedClientSecret: this.#seal(uid, input.oidc.clientSecret ?? ''),
      });
      await this.d.audit.record(tx, p, {
        type: IDP_TYPE,
        operation: 'create',
        uid: idp.uid,
        after: idp,
      });
      return idp;
    });
  }

  /** @throws RpcError NOT_FOUND when missing or invisible to the caller. */
  async get(p: Principal, uid: string): Promise<IdentityProvider> {
    requireUid(uid);
    await this.d.authz.require(
      p,
      'identity_providers.list',
      uid,
      'identity_providers.list',
      IDP_TYPE,
    );
    const idp = await this.d.uow.replicaRead((tx) => this.d.idps.get(tx, uid));
    if (!idp) throw notFound(IDP_TYPE, uid);
    return idp;
  }

  /** @throws RpcError INVALID_ARGUMENT for a bad list request or page token. */
  async list(p: Principal, req: ListRequest): Promise<ListPage<IdentityProvider>> {
    const visibility = await this.d.authz.visibility(p, 'identity_providers.list');
    return this.d.pager.page(IDP_LIST, req, visibility, (q) =>
      this.d.uow.replicaRead((tx) => this.d.idps.list(tx, q)),
    );
  }

  /**
   * Field-mask update. `oidc` is replaced whole, except that an absent or empty
   * `clientSecret` keeps the stored one.
   * @throws RpcError INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED.
   */
  async update(
    p: Principal,
    uid: string,
    body: Body,
    updateMask: string | string[] | undefined,
  ): Promise<IdentityProvider> {
    requireUid(uid);
    const patch = parseInput(
      this.schemas.patch,
      resolvePatch(body, parseMask(updateMask), IDP_UPDATE),
    );
    if (patch.oidc !== undefined) this.#notServerClient(patch.oidc);
    await this.requireWrite(
      p,
      'identity_providers.update',
      uid,
      'identity_providers.list',
      IDP_TYPE,
    );
    return this.d.uow.run(async (tx) => {
      const current = await this.d.idps.get(tx, uid, { forUpdate: true });
      if (!current) throw notFound(IDP_TYPE, uid);
      const row: IdentityProviderPatchRow = {};
      if (patch.name !== undefined) row.name = patch.name;
      if (patch.description !== undefined) row.description = patch.description;
      if (patch.defaultRole !== undefined) {
        const group = current.parentUid;
        await requireGrantableRole(this.d, p, tx, patch.defaultRole, group, 'defaultRole');
        row.defaultRole = patch.defaultRole;
      }
      if (patch.oidc !== undefined) {
        const secret = patch.oidc.clientSecret ?? '';
        if (secret === '' && !current.hasClientSecret && patch.oidc.pkceEnabled !== true) {
          throw invalidField(
            'oidc.clientSecret',
            'clientSecret is required unless pkceEnabled is true',
          );
        }
        row.oidc = oidcConfig(patch.oidc);
        if (secret !== '') row.sealedClientSecret = this.#seal(uid, secret);
      }
      const updated = await this.d.idps.update(tx, uid, row);
      if (!updated) throw notFound(IDP_TYPE, uid);
      await this.d.audit.record(tx, p, {
        type: IDP_TYPE,
        operation: 'update',
        uid,
        before: current,
        after: updated,
      });
      return updated;
    });
  }

  /** @throws RpcError NOT_FOUND when missing or invisible, PERMISSION_DENIED. */
  async delete(p: Principal, uid: string): Promise<void> {
    requireUid(uid);
    await this.d.authz.require(
      p,
      'identity_providers.delete',
      uid,
      'identity_providers.list',
      IDP_TYPE,
    );
    await this.d.uow.run(async (tx) => {
      const before = await this.d.idps.get(tx, uid);
      if (!(await this.d.idps.delete(tx, uid))) throw notFound(IDP_TYPE, uid);
      await this.d.audit.record(tx, p, { type: IDP_TYPE, operation: 'delete', uid, before });
    });
  }

  /**
   * The client secret of an IdP in plain text, for Arbor's own use (a sign-in flow
   * talking to the provider); no route exposes it. '' when none is stored.
   * @throws RpcError NOT_FOUND for no such IdP; Error when it cannot be opened (its key
   *   is gone, or the value was tampered with or copied from another IdP).
   */
  async clientSecret(uid: string): Promise<string> {
    const stored = await this.d.uow.read((tx) => this.d.idps.clientSecret(tx, uid));
    if (!stored) throw notFound(IDP_TYPE, uid);
    if (stored.value === '' || !stored.sealed) return stored.value;
    return this.d.secrets.open(stored.value, secretContext(uid));
  }

  /**
   * Seal every stored secret that is plain text (written before secrets were sealed) or
   * sealed by a key other than the current one. Run at every start and by
   * `arbor reseal-secrets`; idempotent, and a no-op once everything is current.
   * @returns how many were resealed, and the uids that could not be opened (their key is
   *   no longer configured), which are left as they are.
   */
  async resealClientSecrets(): Promise<{ resealed: number; unreadable: string[] }> {
    const box = this.d.secrets;
    return this.d.uow.run(async (tx) => {
      const rows = await this.d.idps.secretsToReseal(tx, box.currentPrefix);
      const unreadable: string[] = [];
      let resealed = 0;
      for (const row of rows) {
        let plain: string;
        try {
          plain = row.sealed ? box.open(row.value, secretContext(row.uid)) : row.value;
        } catch {
          unreadable.push(row.uid);
          continue;
        }
        await this.d.idps.replaceSecret(tx, row.uid, row.value, this.#seal(row.uid, plain));
        resealed++;
      }
      return { resealed, unreadable };
    });
  }

  /**
   * The ids of the secret keys that stored client secrets are sealed with, sorted: what a
   * backup's keys must hold for every secret to open again after a restore.
   */
  async sealedKeyIds(): Promise<string[]> {
    const sealed = await this.d.uow.run((tx) => this.d.idps.sealedSecrets(tx));
    const kids = sealed.map((v) => SecretBox.kidOf(v) ?? '');
    return [...new Set(kids)].sort();
  }

  #seal(uid: string, plain: string): string {
    return plain === '' ? '' : this.d.secrets.seal(plain, secretContext(uid));
  }
}
