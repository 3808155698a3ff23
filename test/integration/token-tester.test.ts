import test from 'ava';
import { AccessService } from '../../src/gen/arbor/iam/v2beta1/access_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole, fields } from '../helpers/iam-fixtures.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import type { Client } from '../helpers/server.js';

let s: GrpcTestServer;
let issuer: TestIssuer;
let aud: string;
let org: string;
let other: string;
let builder: string;
let deployer: string;
let hidden: string;
let carol: string;
let carolToken: string;
let carol_: Client;
const T = '/iam/v2beta1/access:testToken';
const SUB = 'repo:acme/app:ref:refs/heads/main';

type Clause = { clause: string; passed: boolean; reason: string };
function withoutDefaults(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutDefaults);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== false && x !== '')
        .map(([k, x]) => [k, withoutDefaults(x)]),
    );
  return v;
}
const byClause = (clauses: Clause[]) => Object.fromEntries(clauses.map((c) => [c.clause, c]));

test.before(async () => {
  s = await startGrpcServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true' });
  aud = s.arbor.config.issuerUrl;
  issuer = await TestIssuer.start();
  org = await createGroup(s.admin, 'tester-org');
  other = await createGroup(s.admin, 'tester-other');
  builder = await createIdentity(s.admin, org, 'builder', {
    issuer: issuer.url,
    subject: SUB,
    claims: { repository_owner: 'acme' },
  });
  deployer = await createIdentity(s.admin, org, 'deployer', {
    issuer: issuer.url,
    subjectPattern: 'repo:acme/[a-z]+:environment:prod',
  });
  hidden = await createIdentity(s.admin, other, 'hidden', { issuer: issuer.url, subject: SUB });
  // carol may list the identities of org (nothing in `other`).
  carol = await createIdentity(s.admin, org, 'carol');
  const lister = await createRole(s.admin, org, 'identity-lister', ['identity.list']);
  await createBinding(s.admin, org, carol, lister);
  carolToken = (await s.arbor.tokens.sign(carol, { iss: 'https://x.example', sub: 'carol' })).token;
  carol_ = s.client(carolToken);
});
test.after.always(async () => {
  await issuer?.stop();
  await s?.close();
});

test.serial(
  'a real token: every clause passes, the signature verifies, and nothing is recorded',
  async (t) => {
    const before = (await s.admin.get(`/iam/v2beta1/identities/${builder}`)).body.lastSeenTime;
    const audit = (await s.admin.get('/audit/v2beta1/events?page_size=1')).body.totalCount;
    const token = await issuer.mint({ sub: SUB, aud, repository_owner: 'acme' });
    const res = await carol_.post(T, { token, identityUid: builder });
    t.is(res.status, 200, JSON.stringify(res.body));
    t.is(res.body.results.length, 1);
    const [r] = res.body.results;
    t.is(r.identityUid, builder);
    t.is(r.identityName, 'builder');
    t.true(r.wouldAssume);
    t.deepEqual(
      r.clauses.map((c: Clause) => [c.clause, c.passed]),
      [
        ['issuer', true],
        ['subject', true],
        ['audience', true],
        ['lifetime', true],
        ['claims.repository_owner', true],
        ['signature', true],
      ],
    );
    t.is((await s.admin.get(`/iam/v2beta1/identities/${builder}`)).body.lastSeenTime, before);
    t.is((await s.admin.get('/audit/v2beta1/events?page_size=1')).body.totalCount, audit);
  },
);

test.serial(
  'bare claims: each failing clause says what was expected and what was seen',
  async (t) => {
    const now = Math.floor(Date.now() / 1000);
    const res = await carol_.post(T, {
      claims: { iss: issuer.url, sub: 'repo:evil/app', aud: 'someone-else', exp: now - 3600 },
      identityUid: builder,
    });
    t.is(res.status, 200);
    const [r] = res.body.results;
    t.false(r.wouldAssume);
    const c = byClause(r.clauses);
    t.true(c.issuer!.passed);
    t.false(c.subject!.passed);
    t.regex(
      c.subject!.reason,
      /expected sub "repo:acme\/app:ref:refs\/heads\/main", saw "repo:evil\/app"/,
    );
    t.false(c.audience!.passed);
    t.true(c.audience!.reason.includes(JSON.stringify(aud)));
    t.false(c.lifetime!.passed);
    t.regex(c.lifetime!.reason, /expired/);
    t.false(c['claims.repository_owner']!.passed);
    t.is(c.signature, undefined, 'no signature clause without a real token');
  },
);

test.serial(
  'a token signed by a key the issuer does not publish: the signature fails',
  async (t) => {
    const token = await issuer.mint(
      { sub: SUB, aud, repository_owner: 'acme' },
      { key: await TestIssuer.strayKey() },
    );
    const [r] = (await carol_.post(T, { token, identityUid: builder })).body.results;
    t.false(r.wouldAssume);
    const c = byClause(r.clauses);
    t.true(c.subject!.passed);
    t.false(c.signature!.passed);
    // Said as such, not as a signature that does not verify.
    t.is(c.signature!.reason, 'no key of the issuer matches the token');
  },
);

test.serial('an issuer the identity does not trust: no key is fetched from it', async (t) => {
  const stranger = await TestIssuer.start();
  try {
    const token = await stranger.mint({ sub: SUB, aud });
    const [r] = (await carol_.post(T, { token, identityUid: builder })).body.results;
    const c = byClause(r.clauses);
    t.false(c.issuer!.passed);
    t.false(c.signature!.passed);
    t.regex(c.signature!.reason, /not checked/);
    t.is(stranger.requests, 0);
  } finally {
    await stranger.stop();
  }
});

test.serial('an unsaved claimMatch: a pattern and further claims, no identity uid', async (t) => {
  const now = Math.floor(Date.now() / 1000);
  const res = await carol_.post(T, {
    claims: {
      iss: issuer.url,
      sub: 'repo:acme/web:environment:prod',
      aud: 'ci',
      exp: now + 600,
      team: 'blue',
    },
    claimMatch: {
      issuer: issuer.url,
      subjectPattern: 'repo:acme/[a-z]+:environment:prod',
      audience: 'ci',
      claims: { team: 'red' },
    },
  });
  t.is(res.status, 200);
  const [r] = res.body.results;
  t.false('identityUid' in r);
  t.is(r.identityName, '');
  const c = byClause(r.clauses);
  t.true(c.subject!.passed);
  t.regex(c.subject!.reason, /matches/);
  t.true(c.audience!.passed);
  t.false(c['claims.team']!.passed);
  t.false(r.wouldAssume);
});

test.serial('an invalid claimMatch is refused with the rules of Identity create', async (t) => {
  const res = await carol_.post(T, {
    claims: { iss: issuer.url },
    claimMatch: { issuer: issuer.url, subjectPattern: '(' },
  });
  t.is(res.status, 400);
  t.deepEqual(fields(res.body), ['claimMatch.subjectPattern']);
  const both = await carol_.post(T, { claims: {}, token: 'a.b.c', identityUid: builder });
  t.is(both.status, 400);
  t.deepEqual(fields(both.body), ['claims']);
  const neither = await carol_.post(T, { identityUid: builder });
  t.deepEqual(fields(neither.body), ['token']);
  const two = await carol_.post(T, { claims: {}, identityUid: builder, claimMatch: {} });
  t.true(fields(two.body).includes('claimMatch'));
  const notJwt = await carol_.post(T, { token: 'not-a-jwt', identityUid: builder });
  t.is(notJwt.status, 400);
  t.deepEqual(fields(notJwt.body), ['token']);
});

test.serial(
  'an identity the caller cannot list is NOT_FOUND, exactly as Get answers',
  async (t) => {
    const tested = await carol_.post(T, {
      claims: { iss: issuer.url, sub: SUB },
      identityUid: hidden,
    });
    const got = await carol_.get(`/iam/v2beta1/identities/${hidden}`);
    t.is(tested.status, 404);
    t.deepEqual(tested.body, got.body);
    const missing = `${org}/00000000000000ff`;
    const gone = await carol_.post(T, { claims: {}, identityUid: missing });
    t.deepEqual(gone.body, (await carol_.get(`/iam/v2beta1/identities/${missing}`)).body);
    t.is((await s.client().post(T, { claims: {}, identityUid: builder })).status, 401);
  },
);

test.serial(
  'with no identity: every claim-match identity the caller may list, paged by uid',
  async (t) => {
    const token = await issuer.mint({ sub: SUB, aud, repository_owner: 'acme' });
    const res = await carol_.post(T, { token });
    t.is(res.status, 200);
    const seen = res.body.results.map((r: { identityUid: string }) => r.identityUid);
    t.deepEqual(seen, [builder, carol, deployer].sort());
    t.false(seen.includes(hidden), 'an identity carol cannot list is never tested');
    const assumed = res.body.results.filter((r: { wouldAssume: boolean }) => r.wouldAssume);
    t.deepEqual(
      assumed.map((r: { identityUid: string }) => r.identityUid),
      [builder],
    );
    const first = await carol_.post(T, { token, pageSize: 2 });
    t.is(first.body.results.length, 2);
    t.truthy(first.body.nextPageToken);
    const second = await carol_.post(T, {
      token,
      pageSize: 2,
      pageToken: first.body.nextPageToken,
    });
    t.deepEqual(
      [...first.body.results, ...second.body.results].map(
        (r: { identityUid: string }) => r.identityUid,
      ),
      seen,
    );
    const paged = await carol_.post(T, { token, identityUid: builder, pageSize: 2 });
    t.deepEqual(fields(paged.body), ['pageSize']);
  },
);

test.serial('attacker-chosen claim values are truncated in reasons', async (t) => {
  const long = 'x'.repeat(5000);
  const [r] = (
    await carol_.post(T, {
      claims: { iss: issuer.url, sub: long, aud: [long] },
      identityUid: builder,
    })
  ).body.results;
  for (const c of r.clauses as Clause[]) t.true(c.reason.length < 600, c.clause);
  t.false(JSON.stringify(r).includes('x'.repeat(201)));
});

test.serial('the body is bounded', async (t) => {
  const res = await carol_.post(T, {
    claims: { iss: issuer.url, pad: 'y'.repeat(70 * 1024) },
    identityUid: builder,
  });
  t.is(res.status, 413);
  const g = await s.grpc(carolToken).call(AccessService, 'TestToken', {
    claims: { iss: issuer.url, pad: 'y'.repeat(70 * 1024) },
    identityUid: builder,
  });
  t.false(g.ok);
  t.is(g.code, 3);
});

/**
 * An answer with the instant its lifetime clause was judged at ("it is now …", to the second)
 * left out: the two doors are asked one after the other and may straddle a second.
 */
function atAnyNow(answer: unknown): unknown {
  return JSON.parse(
    JSON.stringify(answer).replace(/it is now \d{4}-\d\d-\d\dT[\d:.]+Z/g, 'it is now (then)'),
  );
}

test.serial('grpc: the same answers as REST, and the same NOT_FOUND', async (t) => {
  const token = await issuer.mint({ sub: SUB, aud, repository_owner: 'acme' });
  const g = s.grpc(carolToken);
  const viaGrpc = await g.call(AccessService, 'TestToken', { token, identityUid: builder });
  t.true(viaGrpc.ok);
  const viaRest = await carol_.post(T, { token, identityUid: builder });
  t.deepEqual(atAnyNow(viaGrpc.ok && viaGrpc.json), atAnyNow(viaRest.body));
  const claims = { iss: issuer.url, sub: 'repo:acme/app:environment:prod', exp: 1 };
  const inline = await g.call(AccessService, 'TestToken', {
    claims,
    claimMatch: { issuer: issuer.url, subject: SUB },
  });
  // proto3 JSON leaves out false and empty strings.
  const rest = (await carol_.post(T, { claims, claimMatch: { issuer: issuer.url, subject: SUB } }))
    .body;
  t.deepEqual(atAnyNow(inline.ok && inline.json), atAnyNow(withoutDefaults(rest)));
  const nf = await g.call(AccessService, 'TestToken', { claims, identityUid: hidden });
  t.false(nf.ok);
  t.is(nf.code, 5);
  g.close();
});

test.serial(
  'an unsaved claimMatch: keys are fetched only for a caller who may create identities',
  async (t) => {
    const stranger = await TestIssuer.start();
    try {
      const token = await stranger.mint({ sub: SUB, aud });
      const body = { token, claimMatch: { issuer: stranger.url, subject: SUB } };
      const [asCarol] = (await carol_.post(T, body)).body.results;
      const sig = byClause(asCarol.clauses).signature!;
      t.false(sig.passed);
      t.regex(sig.reason, /may create identities/);
      t.is(stranger.requests, 0, 'carol (identity.list only) made Arbor fetch nothing');
      const [asAdmin] = (await s.admin.post(T, body)).body.results;
      t.true(asAdmin.wouldAssume, JSON.stringify(asAdmin));
      t.true(byClause(asAdmin.clauses).signature!.passed);
      t.true(stranger.requests > 0);
    } finally {
      await stranger.stop();
    }
  },
);
