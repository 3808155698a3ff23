import test, { type ExecutionContext } from 'ava';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { createGroup } from '../helpers/fixtures.js';
import { b64json, TestIssuer } from '../helpers/oidc-issuer.js';
import { startServer, type Reply, type TestServer } from '../helpers/server.js';
import { assertRefused } from '../helpers/sts.js';

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
  assertRefused(t, res, status, code);
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

    // The exchange records its use in memory; the last-used flush writes it.
    await s.arbor.usage?.flusher.flush();
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
