import type { LoginIdp, NewPerson, Person, UserStore } from '../../resources/users/user-store.js';
import type { Tx } from '../../resources/tx.js';
import { kx } from '../unit-of-work.js';

interface IdpRow {
  uid: string;
  parent_uid: string;
  default_role_uid: string;
  oidc: { issuer?: string; clientId?: string };
}

const IDP_COLUMNS = ['uid', 'parent_uid', 'default_role_uid', 'oidc'];

function toIdp(r: IdpRow): LoginIdp {
  return {
    uid: r.uid,
    groupUid: r.parent_uid,
    issuer: r.oidc.issuer ?? '',
    clientId: r.oidc.clientId ?? '',
    defaultRoleUid: r.default_role_uid,
  };
}

export class KnexUserStore implements UserStore {
  async findUser(
    tx: Tx,
    provider: string,
    issuer: string,
    subject: string,
  ): Promise<string | undefined> {
    // The same expressions as the unique index identities_person, so it serves this.
    const row = (await kx(tx)('identities')
      .where('sign_in_provider', provider)
      .whereRaw(`(claim_match->>'issuer') = ? AND (claim_match->>'subject') = ?`, [issuer, subject])
      .first('uid')) as { uid: string } | undefined;
    return row?.uid;
  }

  async ensureUser(tx: Tx, at: NewPerson, p: Person): Promise<string> {
    const name = (p.name || p.email || p.subject).slice(0, 200);
    await kx(tx).raw(
      `INSERT INTO identities (uid, parent_uid, name, description, claim_match, sign_in_provider)
       VALUES (?, ?, ?, ?, ?::jsonb, ?)
       ON CONFLICT (sign_in_provider, (claim_match->>'issuer'), (claim_match->>'subject'))
         WHERE sign_in_provider IS NOT NULL
       DO NOTHING`,
      [
        at.uid,
        at.parentUid,
        name,
        p.email ?? '',
        JSON.stringify({ issuer: p.issuer, subject: p.subject }),
        at.provider,
      ],
    );
    const found = await this.findUser(tx, at.provider, p.issuer, p.subject);
    if (!found) throw new Error('user identity vanished after insert');
    return found;
  }

  async countPeople(tx: Tx, provider: string): Promise<number> {
    const row = (await kx(tx)('identities')
      .where('sign_in_provider', provider)
      .count({ n: '*' })
      .first()) as { n: string | number } | undefined;
    return Number(row?.n ?? 0);
  }

  async lockIdp(tx: Tx, uid: string): Promise<LoginIdp | undefined> {
    const row = (await kx(tx)('identity_providers')
      .where('uid', uid)
      .forUpdate()
      .first(IDP_COLUMNS)) as IdpRow | undefined;
    return row && toIdp(row);
  }

  async idpsForIssuer(tx: Tx, issuer: string): Promise<LoginIdp[]> {
    const rows = (await kx(tx)('identity_providers')
      .whereRaw(`(oidc->>'issuer') = ?`, [issuer])
      .select(IDP_COLUMNS)) as IdpRow[];
    return rows.map(toIdp);
  }

  async idp(tx: Tx, uid: string): Promise<LoginIdp | undefined> {
    const row = (await kx(tx)('identity_providers').where('uid', uid).first(IDP_COLUMNS)) as
      IdpRow | undefined;
    return row && toIdp(row);
  }

  async ensureBinding(
    tx: Tx,
    b: { uid: string; groupUid: string; identityUid: string; roleUid: string },
  ): Promise<boolean> {
    const res = (await kx(tx).raw(
      `INSERT INTO role_bindings (uid, parent_uid, identity_uid, role_uid) VALUES (?, ?, ?, ?)
       ON CONFLICT (parent_uid, identity_uid, role_uid) DO NOTHING
       RETURNING uid`,
      [b.uid, b.groupUid, b.identityUid, b.roleUid],
    )) as { rows: unknown[] };
    return res.rows.length > 0;
  }
}
