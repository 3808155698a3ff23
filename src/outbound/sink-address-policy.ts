import { isIP } from 'node:net';
import { forbiddenAddress } from './address-policy.js';

/**
 * Whether `ip` (a literal address) is one a sink may not reach by default: the same
 * ranges as every other outbound fetch (loopback, private, link-local, CGNAT, metadata,
 * multicast, reserved, and IPv6 forms that carry such an IPv4 address). Checked on the
 * address actually connected to (after DNS), so a name cannot smuggle one in.
 */
export function isPrivateAddress(ip: string): boolean {
  return forbiddenAddress(ip) !== undefined;
}

/**
 * Why `sink` breaks the policy before any lookup (scheme, a literal private address,
 * `localhost`), or undefined when it may be tried.
 */
export function sinkPolicyViolation(sink: string, allowPrivate: boolean): string | undefined {
  if (allowPrivate) return undefined;
  const u = new URL(sink);
  if (u.protocol !== 'https:') return 'sink must be an https URL';
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost'))
    return 'sink must not be a loopback address';
  if (isIP(host) !== 0 && isPrivateAddress(host))
    return 'sink must not be a private or loopback address';
  return undefined;
}
