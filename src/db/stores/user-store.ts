import type { LoginIdp, Person, UserStore } from '../../resources/users/user-store.js';
import type { Tx } from '../../resources/tx.js';
import { kx } from '../unit-of-work.js';

export class KnexUserStore implements UserStore {
  async findUser(tx: Tx, issuer: string, subject: string): Promise<string | undefined> {
    // The same expressions as the unique index identities_user_subject, so it serves this.
    const row = (await kx(tx)('identities')
      .whereNull('parent_uid')
      .whereRaw(`(claim_match->>'issuer') = ? AND (claim_match->>'subject') = ?`, [issuer, subject])
      .first('uid')) as { uid: string } | undefined;
    return row?.uid;
  }

  async ensureUser(tx: Tx, uid: string, p: Person): Promise<string> {
    const name = (p.name || p.email || p.subject).slice(0, 200);
    await kx(tx).raw(
      `INSERT INTO identities (uid, parent_uid, name, description, claim_match)
       VALUES (?, NULL, ?, ?, ?::jsonb)
       ON CONFLICT ((claim_match->>'issuer'), (claim_match->>'subject')) WHERE parent_uid IS NULL
       DO NOTHING`,
      [uid, name, p.email ?? '', JSON.stringify({ issuer: p.issuer, subject: p.subject })],
    );
    const found = await this.findUser(tx, p.issuer, p.subject);
    if (!found) throw new Error('user identity vanished after insert');
    return found;
  }

  async idpsForIssuer(tx: Tx, issuer: string): Promise<LoginIdp[]> {
    const rows = (await kx(tx)('identity_providers')
      .whereRaw(`(oidc->>'issuer') = ?`, [issuer])
      .select('uid', 'parent_uid', 'default_role_uid', 'oidc')) as Array<{
      uid: string;
      parent_uid: string;
      default_role_uid: string;
      oidc: { clientId?: string };
    }>;
    return rows.map((r) => ({
      uid: r.uid,
      groupUid: r.parent_uid,
      clientId: r.oidc.clientId ?? '',
      defaultRoleUid: r.default_role_uid,
    }));
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
