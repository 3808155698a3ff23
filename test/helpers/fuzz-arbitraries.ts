import fc from 'fast-check';
import { durationSecondsArb, instantTextArb } from './fuzz-instants.js';

export { durationSecondsArb, timestampArb } from './fuzz-instants.js';

/**
 * What the HTTP fuzzer (test/security/http-fuzz.test.ts) sends: route templates in many
 * spellings, hostile query parameters, headers and bodies.
 */
const COLLECTIONS = [
  '/iam/v2beta1/groups',
  '/iam/v2beta1/identities',
  '/iam/v2beta1/roles',
  '/iam/v2beta1/roleBindings',
  '/iam/v2beta1/identityProviders',
  '/iam/v2beta1/accountAssociations',
  '/iam/v2beta1/groupInvites',
  '/iam/v2beta1/accessRequests',
  '/registry/v2beta1/repos',
  '/registry/v2beta1/tags',
  '/vulnerabilities/v2beta1/advisories',
  '/iam/v1/groups',
  '/iam/v1/identities',
  '/iam/v1/roles',
  '/iam/v1/rolebindings',
  '/iam/v1/identityProviders',
  '/iam/v1/account_associations',
  '/iam/v1/group_invites',
  '/registry/v1/repos',
];
const SINGLETONS = [
  '/iam/v2beta1/groupInvites:redeem',
  '/sts/exchange',
  '/.well-known/openid-configuration',
  '/.well-known/jwks.json',
  '/healthz',
  '/readyz',
];

/** Strings an attacker reaches for. */
const HOSTILE = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83d',
  '\u202e\u0644\u0627',
  '\ufeff',
  '\uffff',
  '😀'.repeat(50),
  '../../etc/passwd',
  '%00',
  '%2F',
  '__proto__',
  'constructor',
  "' OR 1=1 --",
  '${jndi:ldap://x}',
  '<script>',
  '\\',
  '*',
  '.*',
  '(a+)+b',
  'a'.repeat(5000),
];

const hugeString = 'A'.repeat(1024 * 1024 + 16);

/** Percent-encode UTF-8 bytes; lone surrogates go out as their (invalid) CESU-8 bytes. */
export function pct(str: string): string {
  let out = '';
  for (let i = 0; i < str.length; i++) {
    const c = str.charCodeAt(i);
    const isHigh = c >= 0xd800 && c <= 0xdbff;
    const next = str.charCodeAt(i + 1);
    if (isHigh && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(str.slice(i, i + 2));
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      out +=
        `%${(0xe0 | (c >> 12)).toString(16)}%${(0x80 | ((c >> 6) & 0x3f)).toString(16)}%${(0x80 | (c & 0x3f)).toString(16)}`.toUpperCase();
    } else {
      out += encodeURIComponent(str[i]!);
    }
  }
  return out;
}

const hostileString = fc.oneof(
  fc.constantFrom(...HOSTILE),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ maxLength: 20 }),
);

const uidLike = (uids: readonly string[]): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(...uids),
    fc.stringMatching(/^[0-9a-f]{40}$/),
    fc.stringMatching(/^[0-9a-f]{40}\/[0-9a-f]{16}$/),
    fc.constantFrom('..', '.', '', '%2e%2e', '%2F', 'a/../b', '%00', '%ZZ', '%', '~'),
    hostileString.map(pct),
  );

/** Change the case of some letters (the router is case-sensitive; authn must not be). */
const recase = (path: string) =>
  fc
    .array(fc.boolean(), { minLength: path.length, maxLength: path.length })
    .map((flips) => [...path].map((ch, i) => (flips[i] ? ch.toUpperCase() : ch)).join(''));

const pathArb = (uids: readonly string[]): fc.Arbitrary<{ path: string; route: string }> =>
  fc
    .tuple(
      fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...COLLECTIONS) },
        { weight: 1, arbitrary: fc.constantFrom(...SINGLETONS) },
      ),
      fc.option(uidLike(uids), { nil: undefined, freq: 2 }),
      fc.constantFrom('none', 'none', 'none', 'case', 'double', 'trailing', 'dot', 'encode'),
    )
    .chain(([base, uid, spelling]) => {
      const route = uid === undefined ? base : `${base}/{uid}`;
      const path = uid === undefined ? base : `${base}/${uid}`;
      switch (spelling) {
        case 'case':
          return recase(path).map((p) => ({ path: p, route }));
        case 'double':
          return fc.constant({ path: path.replace(/\//g, '//'), route });
        case 'trailing':
          return fc.constant({ path: `${path}/`, route });
        case 'dot':
          return fc.constant({
            path: path.replace('/v', '/./v').replace('/iam', '/x/../iam'),
            route,
          });
        case 'encode':
          return fc.constant({
            path: `/${path.slice(1).replace(/a/g, '%61').replace(/\//g, '%2F')}`,
            route,
          });
        default:
          return fc.constant({ path, route });
      }
    });

const QUERY_KEYS = [
  'page_size',
  'pageSize',
  'page_token',
  'order_by',
  'skip',
  'uidp.descendants_of',
  'uidp.children_of',
  'name',
  'identity',
  'group',
  'role',
  'digest',
  'id',
  'severity',
  'package',
  'ecosystem',
  'updateMask',
  'update_mask',
  'aud',
  'start_time',
  'end_time',
  '__proto__',
];
const queryValue = fc.oneof(
  fc.constantFrom(
    '-1',
    '0',
    '1',
    '200',
    '201',
    '99999999999999999999',
    '1e309',
    'NaN',
    'name desc',
    'uid asc, name',
    'created_at',
  ),
  hostileString,
  instantTextArb,
);
const queryArb = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_KEYS), hostileString), queryValue), {
    maxLength: 4,
  })
  .map((pairs) => pairs.map(([k, v]) => `${pct(k)}=${pct(v)}`).join('&'));

/** JSON-ish bodies, hostile inside. */
const leaf = fc.oneof(
  hostileString,
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0, 0.1, 1, true, false, null),
  fc.double(),
  fc.integer(),
);
const jsonArb = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    instantTextArb,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(
        fc.constantFrom(
          'name',
          'description',
          'claimMatch',
          'staticKeys',
          'issuer',
          'subject',
          'claims',
          'capabilities',
          'identityUid',
          'roleUid',
          'code',
          'oidc',
          'digest',
          'ttl',
          'notBefore',
          'expireTime',
          'expirationTime',
          'durationSeconds',
          '__proto__',
          'constructor',
          'uid',
        ),
        hostileString,
      ),
      tie('value'),
      { maxKeys: 5 },
    ),
  ),
})).value;

/** Bodies that are objects with known field names most of the time, so validators run. */
const bodyArb = (uids: readonly string[]) =>
  fc.oneof(
    { weight: 6, arbitrary: jsonArb.map((v) => JSON.stringify(v) ?? '') },
    {
      weight: 3,
      arbitrary: fc
        .record(
          {
            name: fc.oneof(fc.constantFrom('ok-name'), hostileString),
            description: hostileString,
            claimMatch: fc.record(
              {
                issuer: hostileString,
                subject: hostileString,
                claims: fc.dictionary(hostileString, hostileString, { maxKeys: 2 }),
              },
              { requiredKeys: [] },
            ),
            capabilities: fc.array(hostileString, { maxLength: 3 }),
            identityUid: uidLike(uids),
            roleUid: uidLike(uids),
            digest: hostileString,
            code: hostileString,
            ttl: fc.oneof(hostileString, fc.constantFrom('60s', '-1s', '99999999999999999999s')),
            notBefore: fc.oneof(instantTextArb, hostileString),
            expireTime: fc.oneof(instantTextArb, hostileString),
            expirationTime: instantTextArb,
            durationSeconds: durationSecondsArb,
            reason: fc.constantFrom('fuzz', ''),
          },
          { requiredKeys: [] },
        )
        .map((o) => JSON.stringify(o)),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '{"__proto__":{"polluted":true},"name":"p"}',
        '{"constructor":{"prototype":{"x":1}}}',
      ),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1000, max: 20000 }).map((d) => '['.repeat(d) + ']'.repeat(d)),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 100, max: 5000 })
        .map((d) => '{"a":'.repeat(d) + '1' + '}'.repeat(d)),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '{',
        'null',
        '[]',
        '"x"',
        '1e99999',
        '\u0000',
        '{"name":"\\ud800"}',
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constant(JSON.stringify({ name: 'huge', description: hugeString })),
    },
  );

/** One request's ingredients; `uids` are real uids to aim at besides made-up ones. */
export const requestArb = (uids: readonly string[]) =>
  fc.record({
    method: fc.oneof(
      { weight: 10, arbitrary: fc.constantFrom('GET', 'POST', 'PATCH', 'PUT', 'DELETE') },
      { weight: 1, arbitrary: fc.constantFrom('HEAD', 'OPTIONS', 'PROPFIND', 'TRACE', 'get') },
    ),
    target: pathArb(uids),
    query: fc.option(queryArb, { nil: undefined, freq: 2 }),
    who: fc.constantFrom(
      'admin',
      'admin',
      'tenant',
      'tenant',
      'viewer',
      'unbound',
      'anonymous',
      'garbage',
    ),
    contentType: fc.constantFrom(
      'application/json',
      'application/json',
      'application/merge-patch+json',
      'text/plain',
      'application/x-www-form-urlencoded',
      '',
      'application/json; charset=latin1',
    ),
    body: fc.option(bodyArb(uids), { nil: undefined, freq: 4 }),
    requestId: fc.option(hostileString.map(pct), { nil: undefined, freq: 4 }),
  });

/** How a fuzzed gRPC call travels: which door of the server's two takes it. */
export type RpcTransport = 'fast' | 'grpc-deadline' | 'grpc-web' | 'connect';

/** One protobuf field on the wire, with a random number, wire type and value. */
const fieldArb = fc.oneof(
  fc.record({
    no: fc.integer({ min: 1, max: 20 }),
    wire: fc.constant(0),
    v: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  }),
  fc.record({
    no: fc.integer({ min: 1, max: 20 }),
    wire: fc.constant(2),
    v: fc.oneof(
      fc.string({ maxLength: 40 }).map((s) => Buffer.from(s)),
      fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b)),
    ),
  }),
  fc.record({
    no: fc.integer({ min: 1, max: 20 }),
    wire: fc.constantFrom(1, 5),
    v: fc.constant(0n),
  }),
  fc.record({
    no: fc.integer({ min: 0, max: 1 << 29 }),
    wire: fc.constantFrom(3, 4, 6, 7),
    v: fc.constant(0n),
  }),
);

function varint(n: bigint): number[] {
  const out: number[] = [];
  do {
    let b = Number(n & 0x7fn);
    n >>= 7n;
    if (n > 0n) b |= 0x80;
    out.push(b);
  } while (n > 0n);
  return out;
}

/** A message that looks like protobuf: random fields, right or wrong for the method. */
const messageArb = fc.array(fieldArb, { maxLength: 8 }).map((fields) => {
  const bytes: number[] = [];
  for (const f of fields) {
    bytes.push(...varint((BigInt(f.no) << 3n) | BigInt(f.wire)));
    if (f.wire === 0) bytes.push(...varint(f.v as bigint));
    else if (f.wire === 2) {
      const b = f.v as Buffer;
      bytes.push(...varint(BigInt(b.length)), ...b);
    } else if (f.wire === 1) bytes.push(0, 0, 0, 0, 0, 0, 0, 0);
    else if (f.wire === 5) bytes.push(0, 0, 0, 0);
  }
  return Buffer.from(bytes);
});

/** Random gRPC calls: a method, a door, a caller, and a body of messages and frames. */
export function rpcArb(paths: readonly string[]) {
  return fc.record({
    path: fc.constantFrom(...paths),
    transport: fc.constantFrom<RpcTransport>('fast', 'grpc-deadline', 'grpc-web', 'connect'),
    who: fc.constantFrom('admin', 'anonymous', 'garbage'),
    message: fc.oneof(
      messageArb,
      fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)),
    ),
    /** The frame's flags (1: compressed) and how its length lies, if it does. */
    flags: fc.constantFrom(0, 0, 0, 1, 0x80),
    lie: fc.oneof(
      fc.constant(0),
      fc.integer({ min: -8, max: 8 }),
      fc.integer({ min: 0, max: 0xffffffff }),
    ),
    /** Bytes after the frame: none, a partial or a whole second frame. */
    trailing: fc.oneof(
      fc.constant(Buffer.alloc(0)),
      fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b)),
    ),
  });
}
