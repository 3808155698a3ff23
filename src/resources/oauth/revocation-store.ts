import type { Tx } from '../tx.js';

/** Revoked API tokens by jti (migration 0028). */
export interface RevocationStore {
  /** Record `jti` revoked until `expiresAt` (the token's exp); again is a no-op. */
  revoke(tx: Tx, jti: string, identityUid: string, expiresAt: Date): Promise<void>;
  /** Whether `jti` is revoked (rows past their expiry may still answer true: harmless). */
  isRevoked(tx: Tx, jti: string): Promise<boolean>;
}
