import { notFound } from '../../core/rpc-error.js';
import { GROUP_TYPE } from '../../resources/groups/group.js';
import type {
  IdentityProvider,
  OidcConfig,
} from '../../resources/identity-providers/identity-provider.js';
import type {
  IdentityProviderPatchRow,
  IdentityProviderStore,
  NewIdentityProvider,
  StoredClientSecret,
} from '../../resources/identity-providers/identity-provider-store.js';
import type { PageQuery, StorePage } from '../../resources/list-types.js';
import type { Tx } from '../../resources/tx.js';
import { constraintOf, isForeignKeyViolation } from '../errors.js';
import { standardList } from '../standard-list.js';
import { kx } from '../unit-of-work.js';

interface IdpRow {
  uid: string;
  parent_uid: string;
  name: string;
  description: string;
  default_role_uid: string;
  oidc: OidcConfig;
  has_client_secret: boolean;
  created_at: Date;
  updated_at: Date;
}

const T = 'identity_providers';

/**
 * Every column a read may select. `oidc_client_secret` is deliberately absent: only
 * `has_client_secret` (whether one is stored) is ever read back.
 */
const COLUMNS = [
  'uid',
  'parent_uid',
  'name',
  'description',
  'default_role_uid',
  'oidc',
  'created_at',
  'updated_at',
] as const;

/** Computed in SQL so that no query here ever selects the secret itself. */
const HAS_SECRET = `(${T}.oidc_client_secret <> '') AS has_client_secret`;

function toIdp(r: IdpRow): IdentityProvider {
  return {
    uid: r.uid,
    parentUid: r.parent_uid,
    name: r.name,
    description: r.description,
    defaultRole: r.default_role_uid,
    oidc: {
      issuer: r.oidc.issuer,
      clientId: r.oidc.clientId,
      additionalScopes: r.oidc.additionalScopes ?? [],
      pkceEnabled: r.oidc.pkceEnabled ?? false,
    },
    hasClientSecret: r.has_client_secret,
    createTime: r.created_at,
    updateTime: r.updated_at,
  };
}

export class KnexIdentityProviderStore implements IdentityProviderStore {
  private select(tx: Tx) {
    const k = kx(tx);
    return [...COLUMNS.map((c) => `${T}.${c}`), k.raw(HAS_SECRET)];
  }

  async get(
    tx: Tx,
    uid: string,
    opts: { forUpdate?: boolean } = {},
  ): Promise<IdentityProvider | undefined> {
    const q = kx(tx)(T).where({ uid }).first(this.select(tx));
    if (opts.forUpdate) q.forUpdate();
    const row = (await q) as IdpRow | undefined;
    return row && toIdp(row);
  }

  async insert(tx: Tx, idp: NewIdentityProvider): Promise<IdentityProvider> {
    try {
      const [row] = (await kx(tx)(T)
        .insert({
          uid: idp.uid,
          parent_uid: idp.parentUid,
          name: idp.name,
          description: idp.description,
          default_role_uid: idp.defaultRole,
          oidc: JSON.stringify(idp.oidc),
          oidc_client_secret: idp.sealedClientSecret,
          oidc_client_secret_sealed: true,
        })
        .returning(this.select(tx))) as [IdpRow];
      return toIdp(row);
    } catch (e) {
      if (isForeignKeyViolation(e) && constraintOf(e)?.includes('parent_uid')) {
        throw notFound(GROUP_TYPE, idp.parentUid);
      }
      throw e;
    }
  }

  async update(
    tx: Tx,
    uid: string,
    patch: IdentityProviderPatchRow,
  ): Promise<IdentityProvider | undefined> {
    const k = kx(tx);
    const set: Record<string, unknown> = { updated_at: k.fn.now() };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.defaultRole !== undefined) set.default_role_uid = patch.defaultRole;
    if (patch.oidc !== undefined) set.oidc = JSON.stringify(patch.oidc);
    if (patch.sealedClientSecret !== undefined) {
      set.oidc_client_secret = patch.sealedClientSecret;
      set.oidc_client_secret_sealed = true;
    }
    const [row] = (await k(T).where({ uid }).update(set).returning(this.select(tx))) as IdpRow[];
    return row && toIdp(row);
  }

  async delete(tx: Tx, uid: string): Promise<boolean> {
    return (await kx(tx)(T).where({ uid }).del()) > 0;
  }

  async list(tx: Tx, q: PageQuery): Promise<StorePage<IdentityProvider>> {
    const k = kx(tx);
    const page = await standardList<IdpRow>(
      k,
      {
        table: T,
        sort: { name: 'name', created_at: 'created_at' },
        filters: { name: `${T}.name` },
        select: COLUMNS.map((c) => `${T}.${c}`),
        extend: (qb) => void qb.select(k.raw(HAS_SECRET)),
      },
      q,
    );
    return { ...page, items: page.items.map(toIdp) };
  }

  async clientSecret(tx: Tx, uid: string): Promise<StoredClientSecret | undefined> {
    const row = (await kx(tx)(T)
      .where({ uid })
      .first('uid', 'oidc_client_secret as value', 'oidc_client_secret_sealed as sealed')) as
      StoredClientSecret | undefined;
    return row;
  }

  async secretsToReseal(tx: Tx, currentKidPrefix: string): Promise<StoredClientSecret[]> {
    return (await kx(tx)(T)
      .whereNot('oidc_client_secret', '')
      .andWhere((q) =>
        q
          .where('oidc_client_secret_sealed', false)
          .orWhereRaw('left(oidc_client_secret, ?) <> ?', [
            currentKidPrefix.length,
            currentKidPrefix,
          ]),
      )
      .orderBy('uid')
      .forUpdate()
      .select(
        'uid',
        'oidc_client_secret as value',
        'oidc_client_secret_sealed as sealed',
      )) as StoredClientSecret[];
  }

  async sealedSecrets(tx: Tx): Promise<string[]> {
    const rows = (await kx(tx)(T)
      .whereNot('oidc_client_secret', '')
      .andWhere('oidc_client_secret_sealed', true)
      .select('oidc_client_secret as value')) as { value: string }[];
    return rows.map((r) => r.value);
  }

  async replaceSecret(tx: Tx, uid: string, old: string, sealed: string): Promise<void> {
    await kx(tx)(T)
      .where({ uid, oidc_client_secret: old })
      .update({ oidc_client_secret: sealed, oidc_client_secret_sealed: true });
  }
}
