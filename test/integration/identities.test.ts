import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createIdentity, fields, violations } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let org: string;
test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'identities-org');
});
test.after.always(async () => {
  await s?.close();
});

const I = '/iam/v2beta1/identities';
const DAY = 24 * 60 * 60 * 1000;
const JWKS = JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', x: 'eA', y: 'eQ' }] });
const cm = (extra: Record<string, unknown> = {}) => ({ issuer: ISSUER, subject: 'ci', ...extra });

test('identities: create with claimMatch answers every server-owned field', async (t) => {
  const res = await s.admin.post(`${I}/${org}`, {
    name: 'ci bot',
    description: 'CI',
    claimMatch: cm({ audience: 'arbor', claims: { repository: 'acme/app' } }),
  });
  t.is(res.status, 200);
  t.regex(res.body.uid, new RegExp(`^${org}/[0-9a-f]{16}$`));
  t.deepEqual(res.body.claimMatch, {
    issuer: ISSUER,
    subject: 'ci',
    audience: 'arbor',
    claims: { repository: 'acme/app' },
  });
  t.false('staticKeys' in res.body);
  t.is(res.body.lastSeenTime, res.body.createTime);
  t.is(res.body.updateTime, res.body.createTime);
  t.deepEqual((await s.admin.get(`${I}/${res.body.uid}`)).body, res.body);
});

test('identities: patterns are kept as given', async (t) => {
  const res = await s.admin.post(`${I}/${org}`, {
    name: 'patterned',
    claimMatch: {
      issuerPattern: 'https://token\\.actions\\.example\\.com/.*',
      subjectPattern: 'repo:acme/.*',
    },
  });
  t.is(res.status, 200);
  t.deepEqual(res.body.claimMatch, {
    issuerPattern: 'https://token\\.actions\\.example\\.com/.*',
    subjectPattern: 'repo:acme/.*',
  });
});

test('identities: staticKeys expire 365 days after creation by default', async (t) => {
  const res = await s.admin.post(`${I}/${org}`, {
    name: 'static',
    staticKeys: { issuer: ISSUER, subject: 'svc', issuerKeys: JWKS },
  });
  t.is(res.status, 200);
  t.false('claimMatch' in res.body);
  t.is(res.body.staticKeys.issuerKeys, JWKS);
  t.is(Date.parse(res.body.staticKeys.expirationTime) - Date.parse(res.body.createTime), 365 * DAY);
  const soon = new Date(Date.now() + 3 * DAY).toISOString();
  const explicit = await s.admin.post(`${I}/${org}`, {
    name: 'static-2',
    staticKeys: { issuer: ISSUER, subject: 'svc', issuerKeys: JWKS, expirationTime: soon },
  });
  t.is(explicit.status, 200);
  t.is(explicit.body.staticKeys.expirationTime, soon);
});

const invalid: Array<[string, Record<string, unknown>, string[]]> = [
  ['empty body', {}, ['name', 'claimMatch']],
  ['no relationship', { name: 'x' }, ['claimMatch']],
  [
    'both relationships',
    { name: 'x', claimMatch: cm(), staticKeys: { issuer: ISSUER, subject: 's', issuerKeys: JWKS } },
    ['staticKeys'],
  ],
  ['empty claimMatch', { name: 'x', claimMatch: {} }, ['claimMatch.issuer', 'claimMatch.subject']],
  [
    'issuer and issuerPattern',
    { name: 'x', claimMatch: cm({ issuerPattern: 'https://i\\.example/.*' }) },
    ['claimMatch.issuerPattern'],
  ],
  [
    'an issuer pattern that leaves the host open',
    { name: 'x', claimMatch: { issuerPattern: 'https://.*\\.example\\.com', subject: 's' } },
    ['claimMatch.issuerPattern'],
  ],
  [
    'a pattern RE2 cannot express',
    { name: 'x', claimMatch: { issuer: ISSUER, subjectPattern: '(a+)\\1' } },
    ['claimMatch.subjectPattern'],
  ],
  [
    'subject and subjectPattern',
    { name: 'x', claimMatch: cm({ subjectPattern: '.*' }) },
    ['claimMatch.subjectPattern'],
  ],
  [
    'http issuer',
    { name: 'x', claimMatch: cm({ issuer: 'http://i.example' }) },
    ['claimMatch.issuer'],
  ],
  ['not a URL', { name: 'x', claimMatch: cm({ issuer: 'issuer' }) }, ['claimMatch.issuer']],
  [
    'issuer with a query',
    { name: 'x', claimMatch: cm({ issuer: 'https://i.example/?a=b' }) },
    ['claimMatch.issuer'],
  ],
  [
    'bad pattern',
    { name: 'x', claimMatch: { issuer: ISSUER, subjectPattern: 'a)|(b' } },
    ['claimMatch.subjectPattern'],
  ],
  [
    'long pattern',
    { name: 'x', claimMatch: { issuerPattern: 'a'.repeat(513), subject: 's' } },
    ['claimMatch.issuerPattern'],
  ],
  ['unknown member', { name: 'x', claimMatch: cm({ colour: 'red' }) }, ['claimMatch.colour']],
  [
    'claim not a string',
    { name: 'x', claimMatch: cm({ claims: { a: 1 } }) },
    ['claimMatch.claims.a'],
  ],
  ['empty subject', { name: 'x', claimMatch: cm({ subject: ' ' }) }, ['claimMatch.subject']],
  ['bad name', { name: 'Bad!', claimMatch: cm() }, ['name']],
];
for (const [title, body, want] of invalid) {
  test(`identities: ${title} is INVALID_ARGUMENT naming ${want.join(', ')}`, async (t) => {
    const res = await s.admin.post(`${I}/${org}`, body);
    t.is(res.status, 400);
    t.is(res.body.code, 3);
    t.deepEqual(fields(res.body).sort(), [...want].sort(), violations(res.body).join('; '));
  });
}

test('identities: each static-keys rule names its field', async (t) => {
  const sk = (extra: Record<string, unknown>) => ({
    name: 'x',
    staticKeys: { issuer: ISSUER, subject: 's', issuerKeys: JWKS, ...extra },
  });
  const cases: Array<[Record<string, unknown>, string, RegExp]> = [
    [sk({ issuerKeys: 'nope' }), 'staticKeys.issuerKeys', /JSON Web Key Set/],
    [sk({ issuerKeys: '{"keys":[]}' }), 'staticKeys.issuerKeys', /at least one key/],
    [sk({ issuerKeys: '{"keys":[{"x":"1"}]}' }), 'staticKeys.issuerKeys', /kty/],
    [sk({ issuerKeys: '{"keys":[{"kty":"EC","d":"x"}]}' }), 'staticKeys.issuerKeys', /public/],
    [sk({ issuer: 'http://i.example' }), 'staticKeys.issuer', /https/],
    [sk({ subject: undefined }), 'staticKeys.subject', /required/],
    [sk({ expirationTime: 'tomorrow' }), 'staticKeys.expirationTime', /RFC 3339/],
    [sk({ expirationTime: '2001-01-01T00:00:00Z' }), 'staticKeys.expirationTime', /future/],
    [
      sk({ expirationTime: new Date(Date.now() + 400 * DAY).toISOString() }),
      'staticKeys.expirationTime',
      /365 days/,
    ],
  ];
  for (const [body, field, why] of cases) {
    const res = await s.admin.post(`${I}/${org}`, body);
    t.is(res.status, 400, field);
    t.deepEqual(fields(res.body), [field]);
    t.regex(violations(res.body)[0]!, why);
  }
});

test('identities: http issuers are accepted only when configured', async (t) => {
  const insecure = await startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true' });
  try {
    const g = await createGroup(insecure.admin, 'dev');
    const res = await insecure.admin.post(`${I}/${g}`, {
      name: 'local',
      claimMatch: { issuer: 'http://127.0.0.1:9000', subject: 's' },
    });
    t.is(res.status, 200);
    const ftp = await insecure.admin.post(`${I}/${g}`, {
      name: 'ftp',
      claimMatch: { issuer: 'ftp://x.example', subject: 's' },
    });
    t.deepEqual(violations(ftp.body), ['claimMatch.issuer: must be an http or https URL']);
  } finally {
    await insecure.close();
  }
});

test('identities: parent, uid and existence errors', async (t) => {
  t.is((await s.admin.post(`${I}/${'0'.repeat(40)}`, { name: 'x', claimMatch: cm() })).status, 404);
  const badParent = await s.admin.post(`${I}/nope`, { name: 'x', claimMatch: cm() });
  t.deepEqual(fields(badParent.body), ['parent']);
  t.is((await s.admin.get(`${I}/${org}/${'1'.repeat(16)}`)).status, 404);
  t.deepEqual(fields((await s.admin.get(`${I}/not-a-uid`)).body), ['uid']);
  t.is((await s.admin.delete(`${I}/${org}/${'1'.repeat(16)}`)).status, 404);
});

test('identities: update without a mask changes only the body fields', async (t) => {
  const uid = await createIdentity(s.admin, org, 'upd-1');
  const before = (await s.admin.get(`${I}/${uid}`)).body;
  await new Promise((r) => setTimeout(r, 5));
  const res = await s.admin.patch(`${I}/${uid}`, {
    description: 'changed',
    lastSeenTime: '2000-01-01T00:00:00Z',
  });
  t.is(res.status, 200);
  t.is(res.body.name, 'upd-1');
  t.is(res.body.description, 'changed');
  t.deepEqual(res.body.claimMatch, before.claimMatch);
  t.is(res.body.lastSeenTime, before.lastSeenTime);
  t.is(res.body.createTime, before.createTime);
  t.true(Date.parse(res.body.updateTime) > Date.parse(before.updateTime));
});

test('identities: claimMatch is replaced whole and validated', async (t) => {
  const uid = await createIdentity(s.admin, org, 'upd-2');
  const res = await s.admin.patch(`${I}/${uid}?update_mask=claim_match`, {
    name: 'ignored',
    claimMatch: { issuer: ISSUER, subjectPattern: 'repo:.*' },
  });
  t.is(res.status, 200);
  t.is(res.body.name, 'upd-2');
  t.deepEqual(res.body.claimMatch, { issuer: ISSUER, subjectPattern: 'repo:.*' });
  const bad = await s.admin.patch(`${I}/${uid}`, { claimMatch: { issuer: 'http://x' } });
  t.deepEqual(fields(bad.body).sort(), ['claimMatch.issuer', 'claimMatch.subject']);
  const cleared = await s.admin.patch(`${I}/${uid}?updateMask=claimMatch`, {});
  t.deepEqual(violations(cleared.body), [
    'claimMatch: one of claimMatch or staticKeys is required',
  ]);
});

test('identities: switching to staticKeys needs both relationships in the mask', async (t) => {
  const uid = await createIdentity(s.admin, org, 'upd-3');
  const staticKeys = { issuer: ISSUER, subject: 'svc', issuerKeys: JWKS };
  const both = await s.admin.patch(`${I}/${uid}`, { staticKeys });
  t.deepEqual(violations(both.body), ['staticKeys: cannot be set together with claimMatch']);
  const res = await s.admin.patch(`${I}/${uid}?updateMask=claimMatch,staticKeys`, { staticKeys });
  t.is(res.status, 200);
  t.false('claimMatch' in res.body);
  t.is(Date.parse(res.body.staticKeys.expirationTime) - Date.parse(res.body.createTime), 365 * DAY);
});

test('identities: bad masks, immutable fields and missing identities', async (t) => {
  const uid = await createIdentity(s.admin, org, 'upd-4');
  for (const mask of ['uid', 'lastSeenTime', 'nonsense']) {
    const res = await s.admin.patch(`${I}/${uid}?updateMask=${mask}`, {});
    t.deepEqual(fields(res.body), ['update_mask'], mask);
  }
  t.is((await s.admin.patch(`${I}/${org}/${'2'.repeat(16)}`, { description: 'x' })).status, 404);
});

test('identities: delete answers {} and the identity is gone', async (t) => {
  const uid = await createIdentity(s.admin, org, 'short-lived');
  const res = await s.admin.delete(`${I}/${uid}`);
  t.is(res.status, 200);
  t.deepEqual(res.body, {});
  t.is((await s.admin.get(`${I}/${uid}`)).status, 404);
});

test('identities: a group holding an identity cannot be deleted', async (t) => {
  const g = await createGroup(s.admin, 'holds-identity');
  const uid = await createIdentity(s.admin, g, 'resident');
  const res = await s.admin.delete(`/iam/v2beta1/groups/${g}`);
  t.is(res.body.code, 9);
  t.is(res.body.message, 'Precondition failed: cannot delete group with child identities');
  t.is(res.body.details[1].violations[0].type, 'RESOURCE_NOT_EMPTY');
  await s.admin.delete(`${I}/${uid}`);
  t.is((await s.admin.delete(`/iam/v2beta1/groups/${g}`)).status, 200);
});

test('identities: getForExchange and touchLastSeen serve the STS', async (t) => {
  const uid = await createIdentity(s.admin, org, 'exchanged');
  const svc = s.arbor.services.identities;
  t.is((await svc.getForExchange(uid))?.name, 'exchanged');
  t.is(await svc.getForExchange(`${org}/${'3'.repeat(16)}`), undefined);
  t.is(await svc.getForExchange('garbage'), undefined);
  const later = new Date(Date.now() + 60_000);
  await svc.touchLastSeen(uid, later);
  await svc.touchLastSeen(uid, new Date(Date.now() - 60_000));
  const got = (await s.admin.get(`${I}/${uid}`)).body;
  t.is(got.lastSeenTime, later.toISOString());
  t.not(got.updateTime, later.toISOString());
});

test('identities: touchLastSeen writes only once lastSeenTime is a minute old', async (t) => {
  const uid = await createIdentity(s.admin, org, 'touched-to-the-minute');
  const svc = s.arbor.services.identities;
  const seen = async () => (await s.admin.get(`${I}/${uid}`)).body.lastSeenTime as string;
  // The first federation is always recorded; after it, lastSeenTime moves by the minute.
  await svc.touchLastSeen(uid, new Date(Date.now() + 1_000));
  const first = await seen();
  await svc.touchLastSeen(uid, new Date(Date.parse(first) + 30_000));
  t.is(await seen(), first, 'half a minute later is not due: nothing is written');
  const due = new Date(Date.parse(first) + 61_000);
  await svc.touchLastSeen(uid, due);
  t.is(await seen(), due.toISOString());
});
