import { createHmac } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import test, { type ExecutionContext } from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { b64json, TestIssuer } from '../helpers/oidc-issuer.js';
import { startServer, type Reply, type TestServer } from '../helpers/server.js';
import {
  assertRefused,
  exchangeAt,
  startAttackerIssuer,
  unsignedToken,
  type CountingServer,
} from '../helpers/sts.js';

/**
 * The STS from the attacker's side. Anyone can call /sts/exchange: no bearer token of
 * Arbor's is needed, only an upstream token and the uid of an identity to assume. Every
 * refusal must be a typed google.rpc.Status and must issue nothing.
 */

let s: TestServer;
let issuer: TestIssuer;
let attackerKeys: TestIssuer;
let attacker: CountingServer;
let org: string;
let identity: string;
let aud: string;
const SUB = 'system:serviceaccount:apps:builder';
const HOUR = 3600;
const I = '/iam/v2beta1/identities';

test.before(async () => {
  // Loopback issuers need insecure issuers; the outbound address policy has its own suite.
  s = await startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true' });
  aud = s.arbor.config.issuerUrl;
  issuer = await TestIssuer.start();
  attackerKeys = await TestIssuer.start();
  attacker = await startAttackerIssuer(attackerKeys);
  org = await createGroup(s.admin, 'attacked-org');
  identity = await createIdentity({ issuer: issuer.url, subject: SUB });
});
test.after.always(async () => {
  await attacker?.stop();
  await attackerKeys?.stop();
  await issuer?.stop();
  await s?.close();
});

async function createIdentity(claimMatch: Record<string, unknown>): Promise<string> {
  const res = await s.admin.post(`${I}/${org}`, {
    name: `id-${Math.random().toString(36).slice(2, 8)}`,
    claimMatch,
  });
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  return res.body.uid as string;
}

function exchange(token: string, id = identity): Promise<Reply> {
  return exchangeAt(s, token, { aud, identity: id });
}

async function refused(
  t: ExecutionContext,
  token: string,
  status: number,
  code: number,
  id = identity,
): Promise<Reply> {
  const res = await exchange(token, id);
  assertRefused(t, res, status, code);
  return res;
}

const now = () => Math.floor(Date.now() / 1000);

test('sts attack: alg none is UNAUTHENTICATED', async (t) => {
  const token = `${b64json({ alg: 'none', typ: 'JWT' })}.${b64json({ iss: issuer.url, sub: SUB, aud, exp: now() + 600 })}.`;
  await refused(t, token, 401, 16);
});

test('sts attack: HS256 signed with the issuer public key (key confusion) is UNAUTHENTICATED', async (t) => {
  const jwk = issuer.jwks().keys[0]!;
  const head = b64json({ alg: 'HS256', kid: jwk.kid });
  const body = b64json({ iss: issuer.url, sub: SUB, aud, exp: now() + 600 });
  const sig = createHmac('sha256', JSON.stringify(jwk))
    .update(`${head}.${body}`)
    .digest('base64url');
  await refused(t, `${head}.${body}.${sig}`, 401, 16);
});

test('sts attack: a forged signature under the real kid is UNAUTHENTICATED', async (t) => {
  const stray = await TestIssuer.strayKey();
  const kid = issuer.jwks().keys[0]!.kid!;
  await refused(t, await issuer.mint({ sub: SUB, aud }, { key: { ...stray, kid } }), 401, 16);
  const [h, p] = (await issuer.mint({ sub: SUB, aud })).split('.');
  await refused(t, `${h}.${p}.${'A'.repeat(342)}`, 401, 16);
});

test('sts attack: a token for another audience, or none, is PERMISSION_DENIED', async (t) => {
  await refused(t, await issuer.mint({ sub: SUB, aud: 'https://elsewhere.example' }), 403, 7);
  await refused(t, await issuer.mint({ sub: SUB }), 403, 7);
  const ok = await issuer.mint({ sub: SUB, aud });
  const other = await exchangeAt(s, ok, { aud: 'https://another-api.example', identity });
  assertRefused(t, other, 400, 3);
  assertRefused(t, await exchangeAt(s, ok, { identity }), 400, 3);
  // Without identity it is a person's sign-in (§5.2): this issuer is no login provider.
  assertRefused(t, await exchangeAt(s, ok, { aud }), 403, 7);
});

test('sts attack: an expired or not-yet-valid token is UNAUTHENTICATED', async (t) => {
  const n = now();
  await refused(
    t,
    await issuer.mint({ sub: SUB, aud }, { iat: n - 2 * HOUR, exp: n - HOUR }),
    401,
    16,
  );
  await refused(t, await issuer.mint({ sub: SUB, aud, nbf: n + HOUR }), 401, 16);
  await refused(t, await issuer.mint({ aud }), 401, 16);
});

test('sts attack: a kid the issuer never published is UNAUTHENTICATED', async (t) => {
  await refused(t, await issuer.mint({ sub: SUB, aud }, { kid: '../../etc/passwd' }), 401, 16);
});

test('sts attack: a token of an issuer no identity names is refused without contacting it', async (t) => {
  const rogue = await TestIssuer.start();
  try {
    await refused(t, await rogue.mint({ sub: SUB, aud }), 403, 7);
    t.is(rogue.requests, 0);
  } finally {
    await rogue.stop();
  }
});

test('sts attack: a wrong subject reads exactly like an identity that does not exist', async (t) => {
  const mismatch = await refused(t, await issuer.mint({ sub: 'apps:intruder', aud }), 403, 7);
  const unknown = await refused(
    t,
    await issuer.mint({ sub: SUB, aud }),
    403,
    7,
    `${org}/0123456789abcdef`,
  );
  t.is(unknown.body.message, mismatch.body.message);
});

test('sts attack: static keys accept only their own issuer, subject and signature', async (t) => {
  const offline = await TestIssuer.start('ES256');
  try {
    const created = await s.admin.post(`${I}/${org}`, {
      name: 'static-attacked',
      staticKeys: {
        issuer: offline.url,
        subject: 'puller',
        issuerKeys: JSON.stringify(offline.jwks()),
      },
    });
    t.is(created.status, 200, JSON.stringify(created.body));
    const uid = created.body.uid as string;
    const stray = await TestIssuer.strayKey('ES256');
    const kid = offline.jwks().keys[0]!.kid!;
    await refused(
      t,
      await offline.mint({ sub: 'puller', aud }, { key: { ...stray, kid } }),
      401,
      16,
      uid,
    );
    await refused(t, await offline.mint({ sub: 'someone-else', aud }), 403, 7, uid);
    await refused(t, await issuer.mint({ sub: 'puller', aud }), 403, 7, uid);
    await refused(
      t,
      await offline.mint({ sub: 'puller', aud }, { iat: now(), exp: now() + 48 * HOUR }),
      401,
      16,
      uid,
    );
    t.is(offline.requests, 0, 'static keys are never fetched');
  } finally {
    await offline.stop();
  }
});

test('sts attack: Arbor API tokens, oversized tokens and non-JWTs are not accepted as input', async (t) => {
  const api = (await exchange(await issuer.mint({ sub: SUB, aud }))).body.token as string;
  t.truthy(api);
  await refused(t, api, 401, 16);
  await refused(t, await issuer.mint({ sub: SUB, aud, pad: 'x'.repeat(9_000) }), 401, 16);
  await refused(t, 'not.a.jwt', 401, 16);
  await refused(t, '', 401, 16);
});

test('sts attack: an upstream token without exp, or valid for over 24 h, is UNAUTHENTICATED', async (t) => {
  const n = now();
  await refused(t, await issuer.mint({ sub: SUB, aud }, { omit: ['exp'] }), 401, 16);
  const long = await refused(
    t,
    await issuer.mint({ sub: SUB, aud }, { iat: n, exp: n + 24 * HOUR + 60 }),
    401,
    16,
  );
  t.regex(long.body.message, /more than 24 hours/);
  await refused(t, await issuer.mint({ sub: SUB, aud }, { iat: n, exp: 4_102_444_800 }), 401, 16);
  await refused(
    t,
    await issuer.mint({ sub: SUB, aud }, { omit: ['iat'], exp: n + 25 * HOUR }),
    401,
    16,
  );
  // A future iat cannot stretch the window: exp - now counts too.
  await refused(
    t,
    await issuer.mint({ sub: SUB, aud }, { iat: n + 240 * HOUR, exp: n + 241 * HOUR }),
    401,
    16,
  );
  const day = await exchange(await issuer.mint({ sub: SUB, aud }, { iat: n, exp: n + 23 * HOUR }));
  t.is(day.status, 200, 'a token of a day or less is fine');
});

test('sts attack: a token whose iss is not a plain issuer URL is refused before any lookup', async (t) => {
  for (const iss of [
    `${issuer.url}?x=1`,
    `${issuer.url}#frag`,
    issuer.url.replace('http://', 'http://user:pw@'),
    'not a url',
    `${issuer.url}/${'a'.repeat(2100)}`,
  ]) {
    await refused(t, await issuer.mint({ iss, sub: SUB, aud }), 401, 16);
  }
});

/**
 * Sends `token` while measuring how long the event loop stalls and how long a concurrent
 * /healthz takes: the server runs in this process, so a regex that backtracks shows up as a
 * stall of seconds to hours. The bounds are generous for a loaded CI machine.
 */
async function responsiveWhile(t: ExecutionContext, send: () => Promise<Reply>): Promise<Reply> {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const started = performance.now();
  const [res, health] = await Promise.all([
    send(),
    (async () => {
      await new Promise((r) => setTimeout(r, 5));
      const t0 = performance.now();
      const h = await s.client().get('/healthz');
      return { status: h.status, ms: performance.now() - t0 };
    })(),
  ]);
  loop.disable();
  t.is(health.status, 200);
  t.true(health.ms < 5_000, `/healthz took ${Math.round(health.ms)} ms`);
  t.true(loop.max / 1e6 < 5_000, `the event loop stalled ${Math.round(loop.max / 1e6)} ms`);
  t.true(performance.now() - started < 10_000);
  return res;
}

test.serial(
  'sts attack: ReDoS: (a+)+b is refused as an issuer pattern and harmless elsewhere',
  async (t) => {
    // A pattern with a fixed host may still end in (a+)+b; it is matched by RE2, only ever
    // on a verified token, and an unsigned token only reaches a literal prefix comparison.
    const pinned = await createIdentity({
      issuerPattern: 'http://127\\.0\\.0\\.1:1/(a+)+b',
      subject: SUB,
    });
    // 32 a's: a backtracking engine needs ~2^32 steps (a minute or more); RE2 needs 32.
    const short = unsignedToken({ iss: `http://127.0.0.1:1/${'a'.repeat(32)}`, sub: SUB, aud });
    assertRefused(t, await responsiveWhile(t, () => exchange(short, pinned)), 503, 14);

    const open = await s.admin.post(`${I}/${org}`, {
      name: 'redos-open',
      claimMatch: { issuerPattern: '(a+)+b', subject: SUB },
    });
    assertRefused(t, open, 400, 3);
    t.is(open.body.details[1]?.fieldViolations?.[0]?.field, 'claimMatch.issuerPattern');
  },
);

test.serial("sts attack: ReDoS: kilobytes of a's in iss or sub answer at once", async (t) => {
  const pinned = await createIdentity({
    issuerPattern: 'http://127\\.0\\.0\\.1:1/(a+)+b',
    subject: SUB,
  });
  const longIss = unsignedToken({ iss: `http://127.0.0.1:1/${'a'.repeat(5_500)}`, sub: SUB, aud });
  t.true(longIss.length < 8 * 1024, 'under the token size cap, so it reaches the STS');
  // Over the issuer length bound: refused before it is compared with anything.
  assertRefused(t, await responsiveWhile(t, () => exchange(longIss, pinned)), 401, 16);

  const bySubject = await createIdentity({ issuer: issuer.url, subjectPattern: '(a+)+b' });
  const longSub = await issuer.mint({ sub: 'a'.repeat(5_000), aud });
  assertRefused(t, await responsiveWhile(t, () => exchange(longSub, bySubject)), 403, 7);
  const matching = await issuer.mint({ sub: 'aaab', aud });
  t.is((await exchange(matching, bySubject)).status, 200, 'the pattern still works');
});

test.serial('sts attack: an issuer pattern cannot point discovery at the attacker', async (t) => {
  // Before: `http://.*\.example\.com` accepted `http://attacker/?.example.com`, and the
  // attacker's discovery document and keys made its self-signed token valid.
  const open = await s.admin.post(`${I}/${org}`, {
    name: 'ssrf-open',
    claimMatch: { issuerPattern: 'http://.*\\.example\\.com', subject: SUB },
  });
  assertRefused(t, open, 400, 3);
  const legitPort = new URL(issuer.url).port;
  const pinned = await createIdentity({
    issuerPattern: `http://127\\.0\\.0\\.1:${legitPort}/tenants/[a-z]+`,
    subject: SUB,
  });
  const targets = open.status === 200 ? [pinned, open.body.uid as string] : [pinned];
  const legit = `http://127.0.0.1:${legitPort}`;
  for (const id of targets) {
    for (const iss of [
      `${attacker.url}/?.example.com`,
      `${attacker.url}/tenants/acme`,
      `${attacker.url}/x.example.com`,
      `${legit}@${attacker.url.slice('http://'.length)}/tenants/acme`,
      `${legit}/tenants/acme#@${attacker.url.slice('http://'.length)}`,
      `http://127.0.0.1:${legitPort}0/tenants/acme`,
      `${legit}/tenants/acme/../../elsewhere`, // leaves the pinned path once normalised
      `${legit}/tenants/acme\\..\\..\\elsewhere`,
      `${legit}/tenants/%2e%2e/elsewhere`,
    ]) {
      const res = await exchange(await attackerKeys.mint({ iss, sub: SUB, aud }), id);
      t.true(res.status === 401 || res.status === 403, `${iss}: ${res.status}`);
      assertRefused(t, res, res.status, res.status === 401 ? 16 : 7, iss);
    }
  }
  t.is(attacker.requests, 0, "the attacker's server was never asked");
  t.is(attacker.connections, 0);
});

test.serial('sts attack: a pinned issuer pattern still serves a multi-tenant issuer', async (t) => {
  // The attacker's server plays an honest multi-tenant issuer here: one host, a path per tenant.
  const port = attacker.port;
  const tenants = await createIdentity({
    issuerPattern: `http://127\\.0\\.0\\.1:${port}/tenants/[a-z]+`,
    subject: SUB,
  });
  const iss = `http://127.0.0.1:${port}/tenants/acme`;
  const res = await exchange(await attackerKeys.mint({ iss, sub: SUB, aud }), tenants);
  t.is(res.status, 200, JSON.stringify(res.body));
  const exactAsPattern = await createIdentity({
    issuerPattern: issuer.url.replaceAll('.', '\\.'),
    subject: SUB,
  });
  t.is((await exchange(await issuer.mint({ sub: SUB, aud }), exactAsPattern)).status, 200);
});

test('sts attack: an update cannot bring back an open or backtracking-only pattern', async (t) => {
  const uid = await createIdentity({ issuer: issuer.url, subject: SUB });
  for (const [claimMatch, field] of [
    [{ issuerPattern: 'http://.*\\.example\\.com', subject: SUB }, 'claimMatch.issuerPattern'],
    [{ issuerPattern: '(a+)+b', subject: SUB }, 'claimMatch.issuerPattern'],
    [{ issuer: issuer.url, subjectPattern: '(a)\\1' }, 'claimMatch.subjectPattern'],
  ] as const) {
    const res = await s.admin.patch(`${I}/${uid}?update_mask=claimMatch`, { claimMatch });
    assertRefused(t, res, 400, 3, field);
    t.is(res.body.details[1]?.fieldViolations?.[0]?.field, field);
  }
});
