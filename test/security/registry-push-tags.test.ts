import test from 'ava';
import { decodeJwt } from 'jose';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { basic, builtinRoleUid } from '../helpers/registry-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

// A registry push may overwrite a tag, which through the API is an
// update. The token server grants `push` only where the identity may also move tags.
const SERVICE = 'registry.tags.local';

let s: TestServer;
let issuer: TestIssuer;
let org: string;

test.before(async () => {
  s = await startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true', ARBOR_REGISTRY_SERVICE: SERVICE });
  issuer = await TestIssuer.start();
  org = await createGroup(s.admin, 'push-tags');
  const made = await s.admin.post(`/registry/v2beta1/repos/${org}`, { name: 'app' });
  if (made.status !== 200) throw new Error(JSON.stringify(made.body));
});
test.after.always(async () => {
  await issuer?.stop();
  await s?.close();
});

/** The actions a token-server answer grants on `<org>/app` to an identity holding `role`. */
async function pushActions(name: string, role: string): Promise<string[]> {
  const uid = await createIdentity(s.admin, org, name, { issuer: issuer.url, subject: name });
  await createBinding(s.admin, org, uid, role);
  const upstream = await issuer.mint({ sub: name, aud: s.arbor.config.issuerUrl });
  const q = new URLSearchParams({ aud: s.arbor.config.issuerUrl, identity: uid });
  const api = (await s.client(upstream).get(`/sts/exchange?${q.toString()}`)).body.token;
  const res = await s
    .client()
    .raw(
      `/auth/registry/token?${new URLSearchParams({ service: SERVICE, scope: `repository:${org}/app:pull,push` }).toString()}`,
      { headers: { authorization: basic('_token', api) } },
    );
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  const access = decodeJwt(res.body.token).access as Array<{ actions: string[] }>;
  return access[0]?.actions ?? [];
}

test('registry push: tag.create alone does not buy push, which may move an existing tag', async (t) => {
  const creator = await createRole(s.admin, org, 'tag-creator', [
    'repo.blobs.get',
    'manifest.create',
    'tag.create',
  ]);
  t.deepEqual(await pushActions('creator', creator), ['pull']);
  const mover = await createRole(s.admin, org, 'tag-mover', [
    'repo.blobs.get',
    'manifest.create',
    'tag.create',
    'tag.update',
  ]);
  t.deepEqual(await pushActions('mover', mover), ['pull', 'push']);
  t.deepEqual(await pushActions('pusher', await builtinRoleUid(s.admin, 'registry.push')), [
    'pull',
    'push',
  ]);
});
