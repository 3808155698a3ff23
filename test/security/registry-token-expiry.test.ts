import test from 'ava';
import { decodeJwt } from 'jose';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { basic, builtinRoleUid } from '../helpers/registry-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { REGISTRY_EXP_LEEWAY_S } from '../../src/resources/registry-auth/registry-token-service.js';

/**
 * A registry token is a signed decision, and it must not outlive the
 * bindings behind it. The registry honours a token up to its leeway past `exp`, so `exp`
 * stays that much before the earliest `expireTime` among the grants of its actions.
 */
const SERVICE = 'registry.expiry.local';
let s: TestServer;
let org: string;
let folder: string;
const caps: Record<string, string> = {};

test.before(async () => {
  s = await startServer({ ARBOR_REGISTRY_SERVICE: SERVICE });
  org = await createGroup(s.admin, 'reg-expiry-org');
  folder = await createGroup(s.admin, 'team', org);
  caps.pusher = await builtinRoleUid(s.admin, 'registry.push');
  caps.pull = await createRole(s.admin, org, 'pull-only', ['repo.blobs.get']);
  caps.push = await createRole(s.admin, org, 'push-only', [
    'manifest.create',
    'tag.create',
    'tag.update',
    'repo.create',
  ]);
});
test.after.always(async () => {
  await s?.close();
});

/** An identity holding `bindings` (role, group, seconds to expiry or none); its API token. */
async function holder(
  name: string,
  bindings: Array<{ role: string; at: string; expiresInS?: number }>,
): Promise<{ auth: string; expiries: number[] }> {
  const uid = await createIdentity(s.admin, org, name);
  const expiries: number[] = [];
  for (const b of bindings) {
    const expireTime =
      b.expiresInS === undefined ? undefined : new Date(Date.now() + b.expiresInS * 1000);
    const res = await s.admin.post(`/iam/v2beta1/roleBindings/${b.at}`, {
      identityUid: uid,
      roleUid: b.role,
      ...(expireTime ? { expireTime: expireTime.toISOString() } : {}),
    });
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    if (expireTime) expiries.push(Date.parse(res.body.expireTime));
  }
  const { token } = await s.arbor.tokens.sign(uid, { iss: ISSUER, sub: `sub-${name}` });
  return { auth: basic('_token', token), expiries };
}

async function registryToken(auth: string, scope: string) {
  const q = new URLSearchParams({ service: SERVICE, scope });
  const res = await s.client().raw(`/auth/registry/token?${q.toString()}`, {
    headers: { authorization: auth },
  });
  if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  const claims = decodeJwt(res.body.token) as {
    exp: number;
    iat: number;
    access: Array<{ name: string; actions: string[] }>;
  };
  return { claims, expiresIn: res.body.expires_in as number };
}

/** The latest `exp` (epoch s) that keeps a token inside a grant expiring at `ms`. */
const latestExp = (ms: number) => Math.floor(ms / 1000) - REGISTRY_EXP_LEEWAY_S;

test('a binding expiring in two minutes yields a token that the registry refuses from its expireTime on', async (t) => {
  const { auth, expiries } = await holder('lapsing', [
    { role: caps.pusher!, at: org, expiresInS: 120 },
  ]);
  const { claims, expiresIn } = await registryToken(auth, `repository:${org}/app:pull,push`);
  t.deepEqual(claims.access[0]?.actions, ['pull', 'push']);
  t.true(claims.exp <= latestExp(expiries[0]!), `exp ${claims.exp} vs ${expiries[0]}`);
  t.true(claims.exp + REGISTRY_EXP_LEEWAY_S <= expiries[0]! / 1000);
  // Not shorter than it must be, either: within a couple of seconds of the bound.
  t.true(claims.exp >= latestExp(expiries[0]!) - 3);
  t.is(expiresIn, claims.exp - claims.iat);
});

test('a binding that never expires still gets the full 300 s', async (t) => {
  const { auth } = await holder('steady', [{ role: caps.pusher!, at: org }]);
  const { claims, expiresIn } = await registryToken(auth, `repository:${org}/app:pull,push`);
  t.deepEqual(claims.access[0]?.actions, ['pull', 'push']);
  t.is(claims.exp - claims.iat, 300);
  t.is(expiresIn, 300);
});

test('actions granted by two bindings: the token ends with the earlier; a lasting grant of the same capability keeps it', async (t) => {
  const { auth, expiries } = await holder('two', [
    { role: caps.pull!, at: org, expiresInS: 600 },
    { role: caps.push!, at: org, expiresInS: 200 },
    // pull is also held for good in the folder: there it lasts as long as the token may.
    { role: caps.pull!, at: folder },
  ]);
  const [pullUntil, pushUntil] = expiries as [number, number];
  const pull = await registryToken(auth, `repository:${org}/app:pull`);
  t.deepEqual(pull.claims.access[0]?.actions, ['pull']);
  t.is(pull.claims.exp - pull.claims.iat, 300, 'pull alone: 600 s of grant, a 300 s token');

  const both = await registryToken(auth, `repository:${org}/app:pull,push`);
  t.deepEqual(both.claims.access[0]?.actions, ['pull', 'push']);
  t.true(both.claims.exp <= latestExp(pushUntil), 'the earlier expiry (push) bounds the token');
  t.true(both.claims.exp < latestExp(pullUntil));

  const twoRepos = await registryToken(
    auth,
    `repository:${org}/app:push repository:${folder}/app:pull`,
  );
  t.deepEqual(
    twoRepos.claims.access.map((a) => a.actions),
    [['push'], ['pull']],
  );
  t.true(twoRepos.claims.exp <= latestExp(pushUntil), 'one token, one exp: the earliest');

  const folderPull = await registryToken(auth, `repository:${folder}/app:pull`);
  t.is(folderPull.claims.exp - folderPull.claims.iat, 300);
});

test('an action whose binding expires within the registry leeway is left out, not signed', async (t) => {
  const { auth } = await holder('closing', [
    { role: caps.pull!, at: org },
    { role: caps.push!, at: org, expiresInS: 30 },
  ]);
  const { claims } = await registryToken(auth, `repository:${org}/app:pull,push`);
  t.deepEqual(claims.access[0]?.actions, ['pull']);
  t.is(claims.exp - claims.iat, 300, 'what is left holds for good');
});
