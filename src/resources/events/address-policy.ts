import { BlockList, isIP } from 'node:net';

/**
 * The outbound-address policy for event sinks: no loopback, private, link-local,
 * shared (CGNAT), unspecified, multicast or reserved address unless configured. Checked
 * on the address actually connected to (after DNS), so a name cannot smuggle one in.
 */
const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b:1::', 48],
] as const) {
  blocked.addSubnet(net, bits, 'ipv6');
}

/** Whether `ip` (a literal address) is one a sink may not reach by default. */
export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return blocked.check(ip, 'ipv4');
  if (family === 6) {
    // IPv4-mapped (::ffff:a.b.c.d) is judged as the IPv4 address it maps.
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
    if (mapped?.[1]) return blocked.check(mapped[1], 'ipv4');
    return blocked.check(ip, 'ipv6');
  }
  return true;
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
