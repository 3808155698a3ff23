import test from 'ava';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { basic, builtinRoleUid, digestOf, envelope } from '../helpers/registry-fixtures.js';
import { startServer, type Reply, type TestServer } from '../helpers/server.js';

const SERVICE = 'registry.test.local';
const NOTIFY = 'notify-secret-0123456789';
const TOKEN_PATH = '/auth/registry/token';
const EVENTS_PATH = '/hooks/registry/events';

let s: TestServer;
let issuer: TestIssuer;
let org: string;
let folder: string;
let otherOrg: string;
const ids: Record<string, string> = {};
const apiTokens: Record<string, string> = {};

/** An API token for `uid` through the STS, from a workload token of the test issuer. */
async function apiTokenFor(uid: string, sub: string): Promise<string> {
  const upstream = await issuer.mint({ sub, aud: s.arbor.config.issuerUrl });
  const q = new URLSearchParams({ aud: s.arbor.config.issuerUrl, identity: uid });
  const res = await s.client(upstream).get(`/sts/exchange?${q.toString()}`);
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  return res.body.token as string;
}

test.before(async () => {
  s = await startServer({
    ARBOR_ALLOW_INSECURE_ISSUERS: 'true',
    ARBOR_REGISTRY_SERVICE: SERVICE,
    ARBOR_REGISTRY_NOTIFY_TOKEN: NOTIFY,
  });
  issuer = await TestIssuer.start();
  org = await createGroup(s.admin, 'reg-org');
  folder = await createGroup(s.admin, 'team', org);
  otherOrg = await createGroup(s.admin, 'reg-other');
  const roles = {
    pusher: await builtinRoleUid(s.admin, 'registry.push'),
    puller: await builtinRoleUid(s.admin, 'registry.pull'),
    viewer: await builtinRoleUid(s.admin, 'viewer'),
    stranger: await builtinRoleUid(s.admin, 'registry.push'),
    tagger: await createRole(s.admin, org, 'tagger', [
      'manifest.create',
      'tag.create',
      'tag.update',
      'repo.blobs.get',
    ]),
  };
  for (const [name, role] of Object.entries(roles)) {
    const home = name === 'stranger' ? otherOrg : org;
    ids[name] = await createIdentity(s.admin, home, name, {
      issuer: issuer.url,
      subject: `sub-${name}`,
    });
    await createBinding(s.admin, home, ids[name], role);
    apiTokens[name] = await apiTokenFor(ids[name], `sub-${name}`);
  }
});
test.after.always(async () => {
  await issuer?.stop();
  await s?.close();
});

function token(auth: string | undefined, scopes: string[], service = SERVICE): Promise<Reply> {
  const q = new URLSearchParams({ service, account: 'x' });
  for (const sc of scopes) q.append('scope', sc);
  return s
    .client()
    .raw(`${TOKEN_PATH}?${q.toString()}`, { headers: auth ? { authorization: auth } : {} });
}

/** The `access` claim of a token-server answer, after checking the answer's shape. */
function accessOf(res: Reply): Array<{ type: string; name: string; actions: string[] }> {
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return decodeJwt(res.body.token).access as Array<{
    type: string;
    name: string;
    actions: string[];
  }>;
}

function actions(res: Reply, name: string): string[] {
  return accessOf(res).find((a) => a.name === name)?.actions ?? [];
}

test('token server: answers the Distribution shape with a JWT the published JWKS verifies for the registry', async (t) => {
  const repo = `${org}/app`;
  const res = await token(basic('_token', apiTokens.pusher!), [`repository:${repo}:pull,push`]);
  t.is(res.status, 200);
  t.is(res.body.token, res.body.access_token);
  t.is(res.body.expires_in, 300);
  t.true(Math.abs(Date.parse(res.body.issued_at) - Date.now()) < 60_000);
  t.is(res.headers.get('cache-control'), 'no-store');
  const jwks = (await s.client().get('/.well-known/jwks.json')).body;
  const { payload } = await jwtVerify(res.body.token, createLocalJWKSet(jwks), {
    issuer: s.arbor.config.issuerUrl,
    audience: SERVICE,
  });
  t.is(payload.sub, ids.pusher);
  t.is(payload.exp! - payload.iat!, 300);
  t.truthy(payload.nbf && payload.jti);
  t.truthy(decodeProtectedHeader(res.body.token).kid);
  t.deepEqual(payload.access, [{ type: 'repository', name: repo, actions: ['pull', 'push'] }]);
});

test('token server: access lists only what each caller’s roles allow on the repo’s group', async (t) => {
  const repo = `${folder}/app`;
  const scope = [`repository:${repo}:pull,push`];
  t.deepEqual(actions(await token(basic('u', apiTokens.pusher!), scope), repo), ['pull', 'push']);
  t.deepEqual(actions(await token(basic('u', apiTokens.puller!), scope), repo), ['pull']);
  t.deepEqual(actions(await token(basic('u', apiTokens.viewer!), scope), repo), ['pull']);
  t.deepEqual(accessOf(await token(basic('u', apiTokens.stranger!), scope)), []);
  // registry.push in another org is push there, and nothing here.
  const other = [`repository:${otherOrg}/app:pull,push`];
  t.deepEqual(actions(await token(basic('u', apiTokens.stranger!), other), `${otherOrg}/app`), [
    'pull',
    'push',
  ]);
  t.deepEqual(accessOf(await token(basic('u', apiTokens.pusher!), other)), []);
});

test('token server: a first push needs repo.create; once the repo exists, manifest and tag writes suffice', async (t) => {
  const repo = `${org}/fresh`;
  const scope = [`repository:${repo}:pull,push`];
  t.deepEqual(actions(await token(basic('u', apiTokens.tagger!), scope), repo), ['pull']);
  const made = await s.admin.post(`/registry/v2beta1/repos/${org}`, { name: 'fresh' });
  t.is(made.status, 200);
  t.deepEqual(actions(await token(basic('u', apiTokens.tagger!), scope), repo), ['pull', 'push']);
});

test('token server: unknown groups, malformed paths, catalog and foreign types grant nothing', async (t) => {
  const res = await token(basic('u', apiTokens.pusher!), [
    `repository:${'f'.repeat(40)}/app:pull,push`,
    `repository:${org}:pull`,
    'repository:library/ubuntu:pull',
    `repository:${org}/UPPER:pull`,
    'registry:catalog:*',
    `plugin:${org}/app:pull`,
    'nonsense',
  ]);
  t.deepEqual(accessOf(res), []);
  const admin = await token(basic('admin', s.arbor.config.adminToken!), ['registry:catalog:*']);
  t.deepEqual(accessOf(admin), [{ type: 'registry', name: 'catalog', actions: ['*'] }]);
});

test('token server: anonymous gets an empty token; bad credentials get 401 with a Basic challenge', async (t) => {
  t.deepEqual(accessOf(await token(undefined, [`repository:${org}/app:pull`])), []);
  for (const auth of [
    basic('u', 'not-a-token'),
    basic('u', apiTokens.pusher!.slice(0, -4) + 'AAAA'),
    'Bearer something',
  ]) {
    const res = await token(auth, [`repository:${org}/app:pull`]);
    t.is(res.status, 401, auth);
    t.is(res.body.code, 16);
    t.is(res.headers.get('www-authenticate'), 'Basic realm="arbor"');
  }
  const wrong = await token(basic('u', apiTokens.pusher!), [], 'other.registry');
  t.is(wrong.status, 400);
  t.is(wrong.body.code, 3);
});

test('token server: a workload OIDC token with the identity uid as username is exchanged like the STS does', async (t) => {
  const repo = `${org}/app`;
  const upstream = await issuer.mint({ sub: 'sub-puller', aud: s.arbor.config.issuerUrl });
  const res = await token(basic(ids.puller!, upstream), [`repository:${repo}:pull,push`]);
  t.deepEqual(actions(res, repo), ['pull']);
  t.is(decodeJwt(res.body.token).sub, ids.puller);
  // The same token may not assume another identity.
  const denied = await token(basic(ids.pusher!, upstream), [`repository:${repo}:pull`]);
  t.is(denied.status, 401);
  const noUser = await token(basic('_token', upstream), [`repository:${repo}:pull`]);
  t.is(noUser.status, 401);
});

test('sts: aud=<registry service> yields a registry token that the token server takes and the API refuses', async (t) => {
  const upstream = await issuer.mint({ sub: 'sub-pusher', aud: s.arbor.config.issuerUrl });
  const q = new URLSearchParams({ aud: SERVICE, identity: ids.pusher! });
  const res = await s.client(upstream).get(`/sts/exchange?${q.toString()}`);
  t.is(res.status, 200, JSON.stringify(res.body));
  const claims = decodeJwt(res.body.token);
  t.like(claims, { aud: SERVICE, sub: ids.pusher, iss: s.arbor.config.issuerUrl });
  t.is((await s.client(res.body.token).get('/iam/v2beta1/groups')).status, 401);
  const repo = `${org}/app`;
  const tok = await token(basic('_token', res.body.token), [`repository:${repo}:push`]);
  t.deepEqual(actions(tok, repo), ['push']);
  const mixed = new URLSearchParams({ aud: `${SERVICE},${s.arbor.config.issuerUrl}` });
  mixed.set('identity', ids.pusher!);
  t.is((await s.client(upstream).get(`/sts/exchange?${mixed.toString()}`)).status, 400);
});

function notify(body: unknown, secret = NOTIFY): Promise<Reply> {
  return s.client().raw(EVENTS_PATH, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${secret}`,
      'content-type': 'application/vnd.docker.distribution.events.v2+json',
    },
    body: JSON.stringify(body),
  });
}

async function tagsOf(repoName: string, group = org) {
  const repos = await s.admin.get(`/registry/v2beta1/repos?uidp.children_of=${group}`);
  const repo = repos.body.repos.find((r: { name: string }) => r.name === repoName);
  if (!repo) return undefined;
  const res = await s.admin.get(`/registry/v2beta1/tags?uidp.children_of=${repo.uid}`);
  return res.body.tags as Array<{ name: string; digest: string; updateTime: string }>;
}

const push = (repo: string, tag: string, digest: string, timestamp: string) => ({
  action: 'push',
  timestamp,
  target: {
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    digest,
    size: 400,
    repository: repo,
    tag,
  },
});

test('notifications: a push makes the repo and its tag; redelivery and overtaken events change nothing', async (t) => {
  const repo = `${org}/events`;
  const first = push(repo, 'v1', digestOf('a'), '2026-01-01T10:00:00.123456789Z');
  const res = await notify(
    envelope(first, {
      action: 'push',
      timestamp: first.timestamp,
      target: {
        mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip',
        digest: digestOf('b'),
        repository: repo,
      },
    }),
  );
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body, { applied: 1, ignored: 1 });
  const tags = await tagsOf('events');
  t.is(tags?.length, 1);
  t.like(tags?.[0], { name: 'v1', digest: digestOf('a') });
  t.is(tags?.[0]?.updateTime, '2026-01-01T10:00:00.123Z');

  // The registry retries until it hears 2xx: the same event again is a no-op.
  t.is((await notify(envelope(first))).status, 200);
  t.deepEqual(await tagsOf('events'), tags);

  // v1 moves to a new digest; an older event delivered late does not move it back.
  const moved = push(repo, 'v1', digestOf('c'), '2026-01-01T10:00:05.000000001Z');
  await notify(envelope(moved));
  await notify(envelope(push(repo, 'v1', digestOf('d'), '2026-01-01T10:00:03Z')));
  const after = await tagsOf('events');
  t.like(after?.[0], { name: 'v1', digest: digestOf('c'), updateTime: '2026-01-01T10:00:05.000Z' });
});

test('notifications: deletes remove a tag, the tags of a digest, or a repo’s tags, but not a later push', async (t) => {
  const repo = `${org}/deletes`;
  await notify(
    envelope(
      push(repo, 'a', digestOf('1'), '2026-02-01T00:00:01Z'),
      push(repo, 'b', digestOf('2'), '2026-02-01T00:00:02Z'),
      push(repo, 'c', digestOf('2'), '2026-02-01T00:00:03Z'),
      push(repo, 'd', digestOf('3'), '2026-02-01T00:00:04Z'),
      push(repo, 'e', digestOf('4'), '2026-02-01T00:00:09Z'),
    ),
  );
  t.is((await tagsOf('deletes'))?.length, 5);
  const del = (target: Record<string, unknown>) => ({
    action: 'delete',
    timestamp: '2026-02-01T00:00:05Z',
    target: { repository: repo, ...target },
  });
  const res = await notify(envelope(del({ tag: 'a' }), del({ digest: digestOf('2') })));
  t.deepEqual(res.body, { applied: 2, ignored: 0 });
  t.deepEqual((await tagsOf('deletes'))?.map((x) => x.name).sort(), ['d', 'e']);
  await notify(envelope(del({})));
  // `e` was pushed after the repo delete was issued: it stays.
  t.deepEqual((await tagsOf('deletes'))?.map((x) => x.name).sort(), ['e']);
});

test('notifications: need the configured bearer token, and ignore what Arbor cannot place', async (t) => {
  const body = envelope(push(`${org}/nope`, 'v1', digestOf('e'), '2026-03-01T00:00:00Z'));
  for (const secret of ['wrong-secret-0123456789', NOTIFY.slice(0, -1)]) {
    const res = await notify(body, secret);
    t.is(res.status, 401);
  }
  const unauth = await s.client().raw(EVENTS_PATH, { method: 'POST', body: '{}' });
  t.is(unauth.status, 401);
  t.is(await tagsOf('nope'), undefined);

  const ignored = await notify(
    envelope(
      push(`${'0'.repeat(40)}/ghost`, 'v1', digestOf('e'), '2026-03-01T00:00:00Z'),
      push('library/ubuntu', 'v1', digestOf('e'), '2026-03-01T00:00:00Z'),
      push(`${org}/x`, 'bad tag', digestOf('e'), '2026-03-01T00:00:00Z'),
      push(`${org}/x`, 'v1', 'md5:abc', '2026-03-01T00:00:00Z'),
      push(`${org}/x`, 'v1', digestOf('e'), 'yesterday'),
      { action: 'pull', timestamp: '2026-03-01T00:00:00Z', target: { repository: `${org}/x` } },
    ),
  );
  t.deepEqual(ignored.body, { applied: 0, ignored: 6 });
  const bad = await notify('not an envelope');
  t.is(bad.status, 400);
});
