import type { Tx } from '../tx.js';

export interface TrustedKeySet {
  issuer: string;
  jwks: { keys: Array<Record<string, unknown>> };
  source: string;
  updateTime: Date;
}

export interface TrustedKeyStore {
  get(tx: Tx, issuer: string): Promise<TrustedKeySet | undefined>;
  /** Insert or replace; returns false when the stored set was already identical. */
  put(tx: Tx, issuer: string, jwks: TrustedKeySet['jwks'], source: string): Promise<boolean>;
}
