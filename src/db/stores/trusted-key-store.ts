import type {
  TrustedKeySet,
  TrustedKeyStore,
} from '../../resources/trusted-keys/trusted-key-store.js';
import type { Tx } from '../../resources/tx.js';
import { kx } from '../unit-of-work.js';

interface Row {
  issuer: string;
  jwks: TrustedKeySet['jwks'];
  source: string;
  updated_at: Date;
}

export class KnexTrustedKeyStore implements TrustedKeyStore {
  async get(tx: Tx, issuer: string): Promise<TrustedKeySet | undefined> {
    const r = (await kx(tx)('trusted_issuer_keys').where({ issuer }).first()) as Row | undefined;
    return r && { issuer: r.issuer, jwks: r.jwks, source: r.source, updateTime: r.updated_at };
  }

  async put(tx: Tx, issuer: string, jwks: TrustedKeySet['jwks'], source: string): Promise<boolean> {
    const k = kx(tx);
    // Writes only when the key set differs: an idle refresh leaves the row alone.
    const res = await k.raw(
      `INSERT INTO trusted_issuer_keys (issuer, jwks, source) VALUES (?, ?::jsonb, ?)
       ON CONFLICT (issuer) DO UPDATE SET jwks = EXCLUDED.jwks, source = EXCLUDED.source, updated_at = now()
       WHERE trusted_issuer_keys.jwks IS DISTINCT FROM EXCLUDED.jwks OR trusted_issuer_keys.source IS DISTINCT FROM EXCLUDED.source
       RETURNING issuer`,
      [issuer, JSON.stringify(jwks), source],
    );
    return (res as { rows: unknown[] }).rows.length > 0;
  }
}
