import { createHmac } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { createGroup } from '../helpers/fixtures.js';
import { b64json, TestIssuer } from '../helpers/oidc-issuer.js';
import { startServer, type Reply, type TestServer } from '../helpers/server.js';

let s: TestServer;
let issuer: TestIssuer;
let org: string;
let otherOrg: string;
let folder: string;
let identity: string;
let aud: string;
const SUB = 'system:serviceaccount:apps:builder';

test.before(async () => {
  s = await startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true' });
  aud = s.arbor.config.issuerUrl;
  issuer = await TestIssuer.start();
  org = await createGroup(s.admin, 'sts-org');
  folder = await createGroup(s.admin, 'folder', org);
  otherOrg = await createGroup(s.admin, 'sts-other');
  const id = await s.admin.post(`/iam/v2beta1/identities/${org}`, {
    name: 'builder',
    claimMatch: { issuer: issuer.url, subject: SUB },
  });
  if (id.status !== 200) throw new Error(JSON.stringify(id.body));
  identity = id.body.uid;
  const roles = await s.admin.get('/iam/v2beta1/roles?name=viewer');
  const viewer = roles.body.roles[0].uid as string;
  const rb = await s.admin.post(`/iam/v2beta1/roleBindings/${org}`, {
    identityUid: identity,
    roleUid: viewer,
  });
  if (rb.status !== 200) throw new Error(JSON.stringify(rb.body));
});
test.after.always(async () => {
  await issuer?.stop();
  await s?.close();
});

function exchange(token: string, query?: Record<string, string>): Promise<Reply> {
  const q = new URLSearchParams(query ?? { aud, identity });
  return s.client(token).get(`/sts/exchange?${q.toString()}`);
}

/** Every refusal: the typed status, and no token in the answer. */
async function refused(
  t: ExecutionContext,
  token: string,
  status: number,
  code: number,
  query?: Record<string, string>,
) {
  const res = await exchange(token, query);
  t.is(res.status, status, JSON.stringify(res.body));
  t.is(res.body.code, code);
  t.is(res.body.details[0]['@type'], 'type.googleapis.com/google.rpc.ErrorInfo');
  t.false('token' in res.body);
  return res;
}

test.serial(
  'sts: a matching token gets a one-hour API token that lists the org subtree and nothing else',
  async (t) => {
    const before = (await s.admin.get(`/iam/v2beta1/identities/${identity}`)).body.lastSeenTime;
    const res = await exchange(await issuer.mint({ sub: SUB, aud }));
    t.is(res.status, 200);
    const claims = decodeJwt(res.body.token);
    t.is(decodeProtectedHeader(res.body.token).alg, 'ES256');
    t.like(claims, { iss: aud, sub: identity, aud });
    t.is(claims.exp! - claims.iat!, 3600);
    t.deepEqual(claims.act, { iss: issuer.url, sub: SUB, aud });

    const api = s.client(res.body.token);
    const list = await api.get('/iam/v2beta1/groups');
    t.is(list.status, 200);
    t.deepEqual(list.body.groups.map((g: { uid: string }) => g.uid).sort(), [org, folder].sort());
    t.is(list.body.totalCount, '2');
    t.is((await api.get(`/iam/v2beta1/groups/${folder}`)).status, 200);
    t.is(
      (await api.get(`/iam/v2beta1/groups/${otherOrg}`)).status,
      404,
      'another org is invisible',
    );
    const write = await api.post(`/iam/v2beta1/groups/${org}`, { name: 'nope' });
    t.is(write.status, 403);
    t.is(write.body.code, 7);
    t.is(
      (await api.post('/iam/v2beta1/groups', { name: 'nope' })).status,
      403,
      'roots need the admin token',
    );

    const after = (await s.admin.get(`/iam/v2beta1/identities/${identity}`)).body.lastSeenTime;
    t.true(Date.parse(after) > Date.parse(before));
  },
);

test.serial('sts: a form-encoded POST works like the GET', async (t) => {
  const res = await s.client(await issuer.mint({ sub: SUB, aud })).raw('/sts/exchange', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ aud, identity }).toString(),
  });
  t.is(res.status, 200);
  t.truthy(res.body.token);
});

test.serial('sts: alg none is refused', async (t) => {
  const token = `${b64json({ alg: 'none', typ: 'JWT' })}.${b64json({ iss: issuer.url, sub: SUB, aud, exp: 9e9 })}.`;
  await refused(t, token, 401, 16);
});

test.serial('sts: HS256 signed with the public key (key confusion) is refused', async (t) => {
  const jwk = issuer.jwks().keys[0]!;
  const head = b64json({ alg: 'HS256', kid: jwk.kid });
  const body = b64json({
    iss: issuer.url,
    sub: SUB,
    aud,
    exp: Math.floor(Date.now() / 1000) + 600,
  });
  const sig = createHmac('sha256', JSON.stringify(jwk))
    .update(`${head}.${body}`)
    .digest('base64url');
  await refused(t, `${head}.${body}.${sig}`, 401, 16);
});

test.serial('sts: a forged signature, expired or not-yet-valid token is refused', async (t) => {
  const stray = await TestIssuer.strayKey();
  await refused(
    t,
    await issuer.mint({ sub: SUB, aud }, { key: { ...stray, kid: issuer.jwks().keys[0]!.kid! } }),
    401,
    16,
  );
  const now = Math.floor(Date.now() / 1000);
  await refused(
    t,
    await issuer.mint({ sub: SUB, aud }, { iat: now - 7200, exp: now - 3600 }),
    401,
    16,
  );
  await refused(t, await issuer.mint({ sub: SUB, aud, nbf: now + 3600 }), 401, 16);
});

test.serial('sts: missing exp or sub is refused', async (t) => {
  await refused(t, await issuer.mint({ sub: SUB, aud }, { omit: ['exp'] }), 401, 16);
  await refused(t, await issuer.mint({ aud }), 401, 16);
});

test.serial(
  'sts: the token must be meant for Arbor and the aud parameter must name the API',
  async (t) => {
    await refused(t, await issuer.mint({ sub: SUB, aud: 'https://elsewhere.example' }), 403, 7);
    await refused(t, await issuer.mint({ sub: SUB }), 403, 7);
    const ok = await issuer.mint({ sub: SUB, aud });
    await refused(t, ok, 400, 3, { aud: 'https://another-api.example', identity });
    await refused(t, ok, 400, 3, { identity });
    // Without identity it is a person's sign-in (§5.2): this issuer is no login provider.
    await refused(t, ok, 403, 7, { aud });
  },
);

test.serial('sts: a wrong subject or another identity is PERMISSION_DENIED', async (t) => {
  await refused(t, await issuer.mint({ sub: 'system:serviceaccount:apps:intruder', aud }), 403, 7);
  const unknown = await refused(t, await issuer.mint({ sub: SUB, aud }), 403, 7, {
    aud,
    identity: `${org}/0123456789abcdef`,
  });
  const mismatch = await refused(t, await issuer.mint({ sub: 'x', aud }), 403, 7);
  t.is(unknown.body.message, mismatch.body.message, 'a missing identity reads like a mismatch');
});

test.serial('sts: an issuer that no identity names is never contacted', async (t) => {
  const rogue = await TestIssuer.start();
  try {
    await refused(t, await rogue.mint({ sub: SUB, aud }), 403, 7);
    t.is(rogue.requests, 0);
  } finally {
    await rogue.stop();
  }
});

test.serial('sts: Arbor API tokens and oversized tokens are not accepted as input', async (t) => {
  const api = (await exchange(await issuer.mint({ sub: SUB, aud }))).body.token as string;
  await refused(t, api, 401, 16);
  await refused(t, await issuer.mint({ sub: SUB, aud, pad: 'x'.repeat(9_000) }), 401, 16);
  await refused(t, 'not.a.jwt', 401, 16);
});

test.serial('sts: an unknown kid refetches the keys at most once per 30 s', async (t) => {
  const before = issuer.requests;
  await refused(t, await issuer.mint({ sub: SUB, aud }, { kid: '../../etc/passwd' }), 401, 16);
  const afterFirst = issuer.requests;
  await refused(t, await issuer.mint({ sub: SUB, aud }, { kid: 'another-unknown' }), 401, 16);
  t.true(afterFirst - before <= 2, 'one discovery + one JWKS fetch at most');
  t.is(issuer.requests, afterFirst, 'the second unknown kid inside 30 s fetched nothing');
});

test.serial('sts: cached keys keep working while the issuer is down', async (t) => {
  issuer.up = false;
  try {
    const res = await exchange(await issuer.mint({ sub: SUB, aud }));
    t.is(res.status, 200);
  } finally {
    issuer.up = true;
  }
});

test.serial('sts: an identity with static keys verifies without any fetch', async (t) => {
  const offline = await TestIssuer.start('ES256');
  try {
    const created = await s.admin.post(`/iam/v2beta1/identities/${org}`, {
      name: 'pull-token',
      staticKeys: {
        issuer: offline.url,
        subject: 'puller',
        issuerKeys: JSON.stringify(offline.jwks()),
      },
    });
    t.is(created.status, 200, JSON.stringify(created.body));
    const res = await exchange(await offline.mint({ sub: 'puller', aud }), {
      aud,
      identity: created.body.uid,
    });
    t.is(res.status, 200);
    t.is(offline.requests, 0);
    await refused(t, await offline.mint({ sub: 'someone-else', aud }), 403, 7, {
      aud,
      identity: created.body.uid,
    });
  } finally {
    await offline.stop();
  }
});

test.serial(
  'api tokens: tampered, expired-by-signature or foreign tokens are UNAUTHENTICATED',
  async (t) => {
    const token = (await exchange(await issuer.mint({ sub: SUB, aud }))).body.token as string;
    const [h, p, sig] = token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const forged = `${h}.${b64json({ ...claims, sub: otherOrg })}.${sig}`;
    t.is((await s.client(forged).get('/iam/v2beta1/groups')).status, 401);
    const upstream = await issuer.mint({ sub: identity, aud, iss: aud });
    t.is(
      (await s.client(upstream).get('/iam/v2beta1/groups')).status,
      401,
      'a token claiming our issuer but signed by another key',
    );
  },
);

test.serial('oidc discovery publishes the issuer and its keys', async (t) => {
  const conf = await s.client().get('/.well-known/openid-configuration');
  t.is(conf.status, 200);
  t.is(conf.body.issuer, aud);
  const jwks = await fetch(conf.body.jwks_uri.replace(aud, s.url)).then(
    (r) => r.json() as Promise<{ keys: Array<Record<string, unknown>> }>,
  );
  t.true(jwks.keys.length >= 1);
  t.false(
    jwks.keys.some((k) => 'd' in k),
    'no private material',
  );
});
