import test from 'ava';
import { forbiddenAddress } from '../../src/outbound/address-policy.js';

/** Each refused range: its first and last address, and the public neighbours just outside. */
const V4: Array<[range: string, first: string, last: string, outside: string[]]> = [
  ['this network', '0.0.0.0', '0.255.255.255', ['1.0.0.0']],
  ['private', '10.0.0.0', '10.255.255.255', ['9.255.255.255', '11.0.0.0']],
  ['shared address space', '100.64.0.0', '100.127.255.255', ['100.63.255.255', '100.128.0.0']],
  ['loopback', '127.0.0.0', '127.255.255.255', ['126.255.255.255', '128.0.0.0']],
  ['link-local', '169.254.0.0', '169.254.255.255', ['169.253.255.255', '169.255.0.0']],
  ['private', '172.16.0.0', '172.31.255.255', ['172.15.255.255', '172.32.0.0']],
  ['IETF protocol assignments', '192.0.0.0', '192.0.0.255', ['192.0.1.0']],
  ['documentation', '192.0.2.0', '192.0.2.255', ['192.0.3.0']],
  ['private', '192.168.0.0', '192.168.255.255', ['192.167.255.255', '192.169.0.0']],
  ['benchmarking', '198.18.0.0', '198.19.255.255', ['198.17.255.255', '198.20.0.0']],
  ['documentation', '198.51.100.0', '198.51.100.255', ['198.51.101.0']],
  ['documentation', '203.0.113.0', '203.0.113.255', ['203.0.114.0']],
  ['multicast', '224.0.0.0', '239.255.255.255', ['223.255.255.255']],
  ['reserved', '240.0.0.0', '255.255.255.255', []],
];

test('address policy: every refused IPv4 range, from its first to its last address', (t) => {
  for (const [range, first, last, outside] of V4) {
    t.is(forbiddenAddress(first), range, first);
    t.is(forbiddenAddress(last), range, last);
    for (const o of outside) t.is(forbiddenAddress(o), undefined, o);
  }
  t.is(forbiddenAddress('169.254.169.254'), 'link-local', 'cloud metadata');
  t.is(forbiddenAddress('8.8.8.8'), undefined);
  t.is(forbiddenAddress('1.1.1.1'), undefined);
});

test('address policy: IPv6 loopback, unspecified, unique-local, link-local and multicast', (t) => {
  t.is(forbiddenAddress('::1'), 'loopback');
  t.is(forbiddenAddress('0:0:0:0:0:0:0:1'), 'loopback');
  t.is(forbiddenAddress('[::1]'), 'loopback', 'as a URL spells it');
  t.is(forbiddenAddress('::'), 'unspecified');
  t.is(forbiddenAddress('fc00::'), 'unique local');
  t.is(forbiddenAddress('fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'), 'unique local');
  t.is(forbiddenAddress('fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'), undefined);
  t.is(forbiddenAddress('fe00::'), undefined);
  t.is(forbiddenAddress('fe80::'), 'link-local');
  t.is(forbiddenAddress('febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff'), 'link-local');
  t.is(forbiddenAddress('fe80::1%eth0'), 'link-local', 'a zone id does not hide it');
  t.is(forbiddenAddress('fec0::1'), 'site-local');
  t.is(forbiddenAddress('ff02::1'), 'multicast');
  t.is(forbiddenAddress('2001:db8::1'), 'documentation');
  t.is(forbiddenAddress('2606:4700:4700::1111'), undefined);
  t.is(forbiddenAddress('2a00:1450:4001:80b::200e'), undefined);
});

test('address policy: IPv6 that carries IPv4 is judged by the IPv4 it carries', (t) => {
  t.is(forbiddenAddress('::ffff:127.0.0.1'), 'loopback (IPv4 in IPv6)');
  t.is(forbiddenAddress('::ffff:7f00:1'), 'loopback (IPv4 in IPv6)');
  t.is(forbiddenAddress('::FFFF:A9FE:A9FE'), 'link-local (IPv4 in IPv6)');
  t.is(forbiddenAddress('::ffff:10.1.2.3'), 'private (IPv4 in IPv6)');
  t.is(forbiddenAddress('::ffff:0.0.0.0'), 'this network (IPv4 in IPv6)');
  t.is(forbiddenAddress('::ffff:8.8.8.8'), undefined);
  t.is(forbiddenAddress('::127.0.0.1'), 'loopback (IPv4 in IPv6)', 'IPv4-compatible');
  t.is(forbiddenAddress('::8.8.8.8'), 'IPv4-compatible');
  t.is(forbiddenAddress('64:ff9b::127.0.0.1'), 'loopback (NAT64)');
  t.is(forbiddenAddress('64:ff9b::808:808'), undefined);
  t.is(forbiddenAddress('64:ff9b:1::1'), 'local NAT64');
  t.is(forbiddenAddress('2002:c0a8:0101::1'), 'private (6to4)');
  t.is(forbiddenAddress('2002:0808:0808::1'), undefined);
  t.is(forbiddenAddress('2001:0:4136:e378:8000:63bf:3fff:fdd2'), 'Teredo');
});

test('address policy: what is not an IP address is refused', (t) => {
  t.is(forbiddenAddress('localhost'), 'not an IP address');
  t.is(forbiddenAddress(''), 'not an IP address');
  t.is(forbiddenAddress('127.1'), 'not an IP address');
  t.is(forbiddenAddress('1:2:3:4:5:6:7'), 'not an IP address');
});
