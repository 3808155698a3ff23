import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { isValidUidp } from '../../core/uidp.js';

/**
 * Invite codes are `<base64url(invite uid)>.<base64url(32 random bytes)>`. The uid part
 * lets redemption find the row with a primary-key read; the random part is the secret.
 * Only SHA-256 of the whole code is stored, so a database dump reveals no usable code.
 */
export interface InviteCode {
  code: string;
  hash: Buffer;
}

export function hashCode(code: string): Buffer {
  return createHash('sha256').update(code, 'utf8').digest();
}

export function newInviteCode(inviteUid: string): InviteCode {
  const code = `${Buffer.from(inviteUid, 'utf8').toString('base64url')}.${randomBytes(32).toString('base64url')}`;
  return { code, hash: hashCode(code) };
}

/** The invite uid a code names, or undefined when the code is not well formed. */
export function inviteUidOf(code: string): string | undefined {
  const parts = code.split('.');
  if (parts.length !== 2 || !parts[0] || !/^[A-Za-z0-9_-]{43}$/.test(parts[1] ?? ''))
    return undefined;
  const uid = Buffer.from(parts[0], 'base64url').toString('utf8');
  return isValidUidp(uid) ? uid : undefined;
}

/** Constant-time comparison of a presented code against a stored hash. */
export function codeMatches(code: string, hash: Buffer): boolean {
  const presented = hashCode(code);
  return presented.length === hash.length && timingSafeEqual(presented, hash);
}
