import type { RevocationStore } from '../../resources/oauth/revocation-store.js';
import type { Tx } from '../../resources/tx.js';
import { kx } from '../unit-of-work.js';

/** At most this many expired rows are deleted by one revocation (the table stays small). */
const SWEEP = 100;

export class KnexTokenRevocationStore implements RevocationStore {
  async revoke(tx: Tx, jti: string, identityUid: string, expiresAt: Date): Promise<void> {
    const k = kx(tx);
    await k.raw(
      `INSERT INTO api_token_revocations (jti, identity_uid, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (jti) DO NOTHING`,
      [jti, identityUid, expiresAt],
    );
    // A revoked token past its exp is refused by its signature check alone: its row can go.
    await k.raw(
      `DELETE FROM api_token_revocations WHERE jti IN (
         SELECT jti FROM api_token_revocations WHERE expires_at < now() - interval '5 minutes'
         ORDER BY expires_at LIMIT ${SWEEP})`,
    );
  }

  async isRevoked(tx: Tx, jti: string): Promise<boolean> {
    const row: unknown = await kx(tx)('api_token_revocations').where({ jti }).first('jti');
    return row !== undefined;
  }
}
