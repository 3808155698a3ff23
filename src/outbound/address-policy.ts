import { isIPv4, isIPv6 } from 'node:net';

/**
 * Which IP addresses an outbound fetch may connect to. Arbor fetches URLs that tenants
 * write (identity issuers, and the `jwks_uri` those issuers publish); without this policy a
 * tenant could make Arbor call its own loopback, the cluster network or a cloud metadata
 * service (169.254.169.254) and read the answer back through error messages.
 *
 * Refused: everything that is not public unicast — loopback, private, shared (CGNAT),
 * link-local, unspecified, "this network", multicast, reserved and documentation ranges —
 * and the IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo),
 * judged by the IPv4 address they carry.
 */

interface V4Range {
  base: number;
  bits: number;
  name: string;
}

function v4(cidr: string, name: string): V4Range {
  const [addr, bits] = cidr.split('/') as [string, string];
  return { base: parseV4(addr)!, bits: Number(bits), name };
}

const V4_RANGES: V4Range[] = [
  v4('0.0.0.0/8', 'this network'),
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'shared address space'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link-local'),
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'IETF protocol assignments'),
  v4('192.0.2.0/24', 'documentation'),
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'benchmarking'),
  v4('198.51.100.0/24', 'documentation'),
  v4('203.0.113.0/24', 'documentation'),
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved'),
];

/** The dotted quad as an unsigned 32-bit number, or undefined. */
function parseV4(s: string): number | undefined {
  if (!isIPv4(s)) return undefined;
  return s.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

/** The eight 16-bit groups of an IPv6 address (a zone id is dropped), or undefined. */
function parseV6(s: string): number[] | undefined {
  const addr = s.replace(/%.*$/, '');
  if (!isIPv6(addr)) return undefined;
  let text = addr.toLowerCase();
  // A trailing dotted quad (::ffff:127.0.0.1) is two more hex groups (::ffff:7f00:1).
  const lastColon = text.lastIndexOf(':');
  const quad = parseV4(text.slice(lastColon + 1));
  if (quad !== undefined) {
    const hex = (x: number) => x.toString(16);
    text = `${text.slice(0, lastColon + 1)}${hex(Math.floor(quad / 65536))}:${hex(quad % 65536)}`;
  }
  const [head, rest] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined) =>
    part === undefined || part === '' ? [] : part.split(':').map((g) => parseInt(g, 16));
  const left = parse(head);
  const right = parse(rest);
  const missing = 8 - left.length - right.length;
  if (rest === undefined && missing !== 0) return undefined;
  const groups = [...left, ...Array<number>(Math.max(missing, 0)).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined;
}

function inV4(n: number, r: V4Range): boolean {
  const size = 2 ** (32 - r.bits);
  return Math.floor(n / size) === Math.floor(r.base / size);
}

function classifyV4(n: number): string | undefined {
  return V4_RANGES.find((r) => inV4(n, r))?.name;
}

/** IPv6 ranges that carry an IPv4 address, and where it sits (two 16-bit groups). */
const V6_CARRIERS: Array<{ name: string; matches: (g: number[]) => boolean; at: number }> = [
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated).
  { name: 'IPv4 in IPv6', matches: (g) => zeros(g, 5) && (g[5] === 0xffff || g[5] === 0), at: 6 },
  {
    name: 'NAT64',
    matches: (g) => g[0] === 0x64 && g[1] === 0xff9b && zeros(g.slice(2), 4),
    at: 6,
  },
  { name: '6to4', matches: (g) => g[0] === 0x2002, at: 1 },
];

/** IPv6 ranges refused outright: first group masked, compared with a value. */
const V6_RANGES: Array<{ name: string; matches: (g: number[]) => boolean }> = [
  { name: 'unspecified', matches: (g) => zeros(g, 8) },
  { name: 'loopback', matches: (g) => zeros(g, 7) && g[7] === 1 },
  { name: 'local NAT64', matches: (g) => g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1 },
  { name: 'Teredo', matches: (g) => g[0] === 0x2001 && g[1] === 0 },
  { name: 'documentation', matches: (g) => g[0] === 0x2001 && g[1] === 0xdb8 },
  { name: 'discard', matches: (g) => g[0] === 0x100 && zeros(g.slice(1), 3) },
  { name: 'unique local', matches: (g) => (g[0]! & 0xfe00) === 0xfc00 },
  { name: 'link-local', matches: (g) => (g[0]! & 0xffc0) === 0xfe80 },
  { name: 'site-local', matches: (g) => (g[0]! & 0xffc0) === 0xfec0 },
  { name: 'multicast', matches: (g) => (g[0]! & 0xff00) === 0xff00 },
];

function zeros(g: number[], n: number): boolean {
  return g.slice(0, n).every((x) => x === 0);
}

function classifyV6(g: number[]): string | undefined {
  const refused = V6_RANGES.find((r) => r.matches(g));
  if (refused) return refused.name;
  const carrier = V6_CARRIERS.find((c) => c.matches(g));
  if (!carrier) return undefined;
  const why = classifyV4(g[carrier.at]! * 65536 + g[carrier.at + 1]!);
  if (why) return `${why} (${carrier.name})`;
  // ::a.b.c.d is deprecated and never a real public address.
  return carrier.at === 6 && g[5] === 0 && carrier.name === 'IPv4 in IPv6'
    ? 'IPv4-compatible'
    : undefined;
}

/**
 * Why Arbor must not connect to `address` (the name of the range it lies in), or undefined
 * for a public unicast address. Anything that is not an IP address is refused too.
 */
export function forbiddenAddress(address: string): string | undefined {
  const n = parseV4(address);
  if (n !== undefined) return classifyV4(n);
  const g = parseV6(address.replace(/^\[|\]$/g, ''));
  if (g !== undefined) return classifyV6(g);
  return 'not an IP address';
}
