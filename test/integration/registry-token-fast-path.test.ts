import test from 'ava';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import { basic, builtinRoleUid } from '../helpers/registry-fixtures.js';
import { headShape, koaBeside, sameFor, type TwoPaths } from '../helpers/fast-parity.js';
import { decodedBody, type RawAnswer } from '../helpers/raw-http.js';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';

/**
 * The registry token server (`GET /auth/registry/token`, asked on every `docker pull`) is
 * served outside Koa too, by the very function its Koa route runs. One Arbor is
 * served twice here, through its REST handler (fast path first) and through Koa alone
 * (`app.callback()`); every request goes to both and must be answered alike: status, the
 * headers a client reads (the Basic challenge, Cache-Control, Vary, the encoding), and the
 * body, whose token differs only where every token differs (signature, jti, times).
 */
const SERVICE = 'registry.fast.local';
let s: TestServer;
let issuer: TestIssuer;
let paths: TwoPaths;
let org: string;
let repoPath: string;
const creds: Record<string, string | undefined> = {};

test.before(async () => {
  s = await startServer({ ARBOR_ALLOW_INSECURE_ISSUERS: 'true', ARBOR_REGISTRY_SERVICE: SERVICE });
  issuer = await TestIssuer.start();
  paths = { ...(await koaBeside(s)), shape };

  org = await createGroup(s.admin, 'regfast-org');
  const other = await createGroup(s.admin, 'regfast-other');
  const repo = await s.admin.post(`/registry/v2beta1/repos/${org}`, { name: 'app' });
  if (repo.status !== 200) throw new Error(JSON.stringify(repo.body));
  repoPath = `${org}/app`;
  const bindings: Array<[string, string, string]> = [
    ['puller', org, 'registry.pull'],
    ['pusher', org, 'registry.push'],
    ['viewer', org, 'viewer'],
    ['stranger', other, 'registry.push'],
  ];
  for (const [name, home, role] of bindings) {
    const uid = await createIdentity(s.admin, home, name, {
      issuer: issuer.url,
      subject: `sub-${name}`,
    });
    await createBinding(s.admin, home, uid, await builtinRoleUid(s.admin, role));
    const upstream = await issuer.mint({ sub: `sub-${name}`, aud: s.arbor.config.issuerUrl });
    const q = new URLSearchParams({ aud: s.arbor.config.issuerUrl, identity: uid });
    const res = await s.client(upstream).get(`/sts/exchange?${q.toString()}`);
    if (res.status !== 200) throw new Error(JSON.stringify(res.body));
    creds[name] = basic('_token', res.body.token as string);
  }
  creds.admin = basic('_token', ADMIN_TOKEN);
  creds.anonymous = undefined;
  creds.forged = `${creds.puller!.slice(0, -8)}QUFBQQ==`;
  creds.bearer = `Bearer ${ADMIN_TOKEN}`;
  creds.noColon = `Basic ${Buffer.from('just-a-token').toString('base64')}`;
  creds.garbage = 'Basic !!!';
});
test.after.always(async () => {
  await paths?.close();
  await issuer?.stop();
  await s?.close();
});

/** The answer as a client reads it, with what differs between any two tokens taken out. */
function shape(r: RawAnswer) {
  const text = decodedBody(r);
  // A HEAD answer has no body.
  const body = (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>;
  if (typeof body.token === 'string') {
    const { jti, iat, nbf, exp, ...claims } = decodeJwt(body.token);
    body.token = {
      header: decodeProtectedHeader(body.token),
      claims,
      times: [typeof jti, nbf === iat, (exp ?? 0) - (iat ?? 0)],
    };
    body.sameToken = body.access_token === text.match(/"token":"([^"]+)"/)?.[1];
    delete body.access_token;
    body.issued_at = typeof body.issued_at;
  }
  return {
    ...headShape(r),
    body,
    cacheControl: r.headers['cache-control'],
    challenge: r.headers['www-authenticate'],
  };
}

/** Sends `path` to both paths (fast-parity.ts's `same`), compared by `shape` above. */
const same = sameFor(() => paths);

const enc = encodeURIComponent;
const TOKEN = '/auth/registry/token';

test.serial(
  'registry token fast path: every caller and scope is answered as Koa answers',
  async (t) => {
    const queries = [
      // crane's own spelling: Go's url.Values, sorted keys, `:` and `/` escaped.
      `scope=${enc(`repository:${repoPath}:pull`)}&service=${SERVICE}`,
      `service=${SERVICE}&scope=repository:${repoPath}:pull,push`,
      `service=${SERVICE}&scope=repository:${org}/new-repo:push`,
      `service=${SERVICE}&scope=repository:${repoPath}:*`,
      `service=${SERVICE}&scope=repository:${repoPath}:delete`,
      `service=${SERVICE}&scope=${enc(`repository:${repoPath}:pull repository:${org}/x:pull`)}`,
      `service=${SERVICE}&scope=repository:${repoPath}:pull&scope=registry:catalog:*`,
      `service=${SERVICE}&scope=repository:${'f'.repeat(40)}/app:pull`,
      `service=${SERVICE}&scope=repository:not-a-path:pull`,
      `service=${SERVICE}&account=_token`,
      `scope=repository:${repoPath}:pull`,
      '',
      `service=other.registry&scope=repository:${repoPath}:pull`,
      `service=${SERVICE}&service=${SERVICE}&scope=repository:${repoPath}:pull`,
      `service=${SERVICE}&${Array.from({ length: 17 }, (_, i) => `scope=repository:${org}/r${i}:pull`).join('&')}`,
    ];
    const statuses = new Set<number>();
    for (const auth of Object.values(creds))
      for (const q of queries) {
        const r = await same(
          t,
          `${TOKEN}?${q}`,
          auth === undefined ? {} : { authorization: auth },
          true,
        );
        statuses.add(r.status);
      }
    // The cases cover success, bad input and bad credentials.
    t.deepEqual([...statuses].sort(), [200, 400, 401]);
  },
);

test.serial('registry token fast path: compressed exactly when koa-compress would', async (t) => {
  const q = `${TOKEN}?scope=${enc(`repository:${repoPath}:pull`)}&service=${SERVICE}`;
  const encodings = new Set<string | undefined>();
  for (const accept of ['gzip', 'br', 'gzip, deflate, br', 'identity', '*', 'deflate', 'zstd'])
    for (const who of ['puller', 'forged']) {
      const r = await same(t, q, { authorization: creds[who]!, 'accept-encoding': accept }, true);
      encodings.add(r.headers['content-encoding'] as string | undefined);
    }
  // A token answer is above the threshold: it is compressed (a 401 is not).
  t.true(encodings.has('gzip'));
  t.true(encodings.has(undefined));
});

test.serial(
  'registry token fast path: other methods, spellings and paths are left to Koa',
  async (t) => {
    const q = `?scope=repository:${repoPath}:pull&service=${SERVICE}`;
    const auth = { authorization: creds.puller! };
    await same(t, `${TOKEN}${q}`, auth, false, 'HEAD');
    await same(t, `${TOKEN}/${q}`, auth, false);
    await same(t, `/AUTH/registry/token${q}`, auth, false);
    await same(t, `/auth/registry/%74oken${q}`, auth, false);
    // A consistency token (read replicas) goes into the same scope on both paths.
    await same(t, `${TOKEN}${q}`, { ...auth, 'arbor-consistency-token': '0/16B3748' }, true);
    t.true(paths.fast.routes().some(([kind, path]) => kind === 'public' && path === TOKEN));
  },
);

test.serial(
  'registry token fast path: the pull grants what the roles allow, through both paths',
  async (t) => {
    const q = `${TOKEN}?scope=${enc(`repository:${repoPath}:pull,push`)}&service=${SERVICE}`;
    const actions = async (who: string) => {
      const r = await same(t, q, { authorization: creds[who]! }, true);
      const access = decodeJwt((JSON.parse(decodedBody(r)) as { token: string }).token)
        .access as Array<{
        actions: string[];
      }>;
      return access.flatMap((a) => a.actions).sort();
    };
    t.deepEqual(await actions('puller'), ['pull']);
    t.deepEqual(await actions('viewer'), ['pull']);
    t.deepEqual(await actions('pusher'), ['pull', 'push']);
    t.deepEqual(await actions('stranger'), []);
    t.deepEqual(await actions('admin'), ['pull', 'push']);
  },
);
