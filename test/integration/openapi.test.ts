import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { validate as validateOpenApi } from '@readme/openapi-parser';
import {
  EXAMPLE_API_URL,
  EXAMPLE_INVITE_CODE,
  EXAMPLE_PATHS,
  EXAMPLE_REGISTRY_SERVICE,
  EXAMPLE_UIDS,
  VIEWER,
} from '../../src/api/openapi/examples.js';
import { ADMIN } from '../../src/auth/principal.js';
import { formBody } from '../../src/client/index.js';
import { TestIssuer } from '../helpers/oidc-issuer.js';
import {
  METHODS,
  mountedRoutes,
  operationsOf,
  schemaValidator,
  type Doc,
  type Operation,
} from '../helpers/openapi-document.js';
import { ADMIN_TOKEN, must, startServer, type TestServer } from '../helpers/server.js';

/**
 * The OpenAPI document: valid 3.1, exactly the routes the routers serve, examples a fresh
 * server accepts, answers that match its schemas, and the checked-in copy up to date.
 */
const NOTIFY_TOKEN = 'openapi-test-notify-token-0123456789';
const SUBJECT = 'openapi-workload';

let s: TestServer;
let doc: Doc;
let issuer: TestIssuer;

test.before(async () => {
  issuer = await TestIssuer.start();
  // Every optional route on, as scripts/openapi/write-document.ts composes it.
  s = await startServer({
    ARBOR_REGISTRY_SERVICE: EXAMPLE_REGISTRY_SERVICE,
    ARBOR_REGISTRY_NOTIFY_TOKEN: NOTIFY_TOKEN,
    ARBOR_ALLOW_INSECURE_ISSUERS: 'true',
  });
  const res = await fetch(`${s.url}/openapi.json`);
  doc = (await res.json()) as Doc;
});
test.after.always(async () => {
  await s?.close();
  await issuer?.stop();
});

test('openapi: /openapi.json is public, cacheable, and the document the app built', async (t) => {
  const res = await fetch(`${s.url}/openapi.json`);
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^application\/json/);
  t.regex(res.headers.get('cache-control') ?? '', /max-age=\d+/);
  const etag = res.headers.get('etag');
  t.truthy(etag);
  t.deepEqual(await res.json(), JSON.parse(JSON.stringify(s.arbor.openapi)));
  // fetch would add `Cache-Control: no-cache` to a conditional request (which forbids a 304).
  const again = await fetch(`${s.url}/openapi.json`, {
    headers: { 'if-none-match': etag!, 'cache-control': 'max-age=0' },
  });
  t.is(again.status, 304);
});

test('openapi: the document is valid OpenAPI 3.1', async (t) => {
  t.is(doc.openapi, '3.1.0');
  // A real validator: the OpenAPI 3.1 meta-schema, then $refs and the rules it checks beyond.
  const result = await validateOpenApi(structuredClone(doc) as never);
  t.true(result.valid, JSON.stringify(result, null, 1).slice(0, 3000));
  // And what no meta-schema says: unique operation ids, every path parameter declared.
  const ids = operationsOf(doc).map(({ op }) => op.operationId);
  t.is(new Set(ids).size, ids.length);
  for (const { path, op } of operationsOf(doc)) {
    const declared = (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name);
    const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    t.deepEqual(declared, templated, op.operationId);
  }
});

test('openapi: every mounted route is in the document, and nothing else is', (t) => {
  const documented = operationsOf(doc).map(({ method, path }) => `${method.toUpperCase()} ${path}`);
  const mounted = mountedRoutes(s.arbor.app);
  t.true(mounted.length > 80, `only ${mounted.length} routes found on the routers`);
  t.deepEqual([...new Set(mounted)].sort(), [...documented].sort());
  t.is(new Set(mounted).size, mounted.length, 'a route mounted twice');
});

test('openapi: without the registry configured, its routes are neither served nor documented', async (t) => {
  const plain = await startServer();
  try {
    const mounted = mountedRoutes(plain.arbor.app).sort();
    const documented = operationsOf(plain.arbor.openapi as unknown as Doc)
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
      .sort();
    t.deepEqual(mounted, documented);
    t.false(documented.some((r) => r.includes('/auth/registry/') || r.includes('/hooks/')));
  } finally {
    await plain.close();
  }
});

/** A request for `op` with its documented examples, stand-ins replaced by real values. */
interface Built {
  url: string;
  init: RequestInit & { headers: Record<string, string> };
}

type Substitute = (v: unknown) => unknown;

function build(path: string, method: string, op: Operation, sub: Substitute): Built {
  const params = op.parameters ?? [];
  let p = path;
  for (const param of params.filter((x) => x.in === 'path'))
    p = p.replace(`{${param.name}}`, String(sub(param.example)));
  const query = new URLSearchParams();
  for (const param of params.filter((x) => x.in === 'query' && x.example !== undefined)) {
    const v = sub(param.example);
    for (const one of Array.isArray(v) ? v : [v]) query.append(param.name, String(one));
  }
  const headers: Record<string, string> = {};
  const init: Built['init'] = { method: method.toUpperCase(), headers };
  const [type, media] = Object.entries(op.requestBody?.content ?? {})[0] ?? [];
  const value = media?.examples?.example?.value;
  if (type && value !== undefined) {
    headers['content-type'] = type;
    init.body =
      type === 'application/json' ? JSON.stringify(sub(value)) : formBody(sub(value) as never);
  }
  return { url: query.size > 0 ? `${p}?${query.toString()}` : p, init };
}

function responseSchema(op: Operation): unknown {
  return op.responses['200']?.content?.['application/json']?.schema;
}

/**
 * Answers a JSON document (not a stream of JSON lines or a file: the advisory import and the
 * backup have tests of their own, advisory-import-api and e2e/embedded-db).
 */
function answersJson(op: Operation): boolean {
  return responseSchema(op) !== undefined;
}

/**
 * Creates the resources the examples' stand-in uids name (examples.ts) and returns the
 * substitution of every stand-in, anywhere in a string, by the real value.
 */
async function exampleWorld(): Promise<{ sub: Substitute; redeemer: string }> {
  const api = s.api;
  const at = (uid: string) => ({ params: { path: { uid } } });
  const org = await must('org', api.POST('/iam/v2beta1/groups', { body: { name: 'openapi-org' } }));
  const folder = await must(
    'folder',
    api.POST('/iam/v2beta1/groups/{uid}', { ...at(org.uid), body: { name: 'openapi-folder' } }),
  );
  const identity = await must(
    'identity',
    api.POST('/iam/v2beta1/identities/{uid}', {
      ...at(org.uid),
      body: { name: 'openapi-identity', claimMatch: { issuer: issuer.url, subject: SUBJECT } },
    }),
  );
  const role = await must(
    'role',
    api.POST('/iam/v2beta1/roles/{uid}', {
      ...at(org.uid),
      body: { name: 'openapi-role', capabilities: ['groups.list'] },
    }),
  );
  const binding = await must(
    'binding',
    api.POST('/iam/v2beta1/roleBindings/{uid}', {
      ...at(org.uid),
      body: { identityUid: identity.uid, roleUid: role.uid },
    }),
  );
  const repo = await must(
    'repo',
    api.POST('/registry/v2beta1/repos/{uid}', { ...at(org.uid), body: { name: 'openapi-repo' } }),
  );
  const tag = await must(
    'tag',
    api.POST('/registry/v2beta1/tags/{uid}', {
      ...at(repo.uid),
      body: { name: 'openapi', digest: `sha256:${'0'.repeat(64)}` },
    }),
  );
  const idp = await must(
    'idp',
    api.POST('/iam/v2beta1/identityProviders/{uid}', {
      ...at(org.uid),
      body: {
        name: 'openapi-idp',
        defaultRole: VIEWER,
        oidc: { issuer: 'https://accounts.example.com', clientId: 'x', clientSecret: 'secret' },
      },
    }),
  );
  const invite = await must(
    'invite',
    api.POST('/iam/v2beta1/groupInvites/{uid}', {
      ...at(org.uid),
      body: { roleUid: VIEWER, ttl: '3600s' },
    }),
  );
  const subscription = await must(
    'subscription',
    api.POST('/events/v2beta1/subscriptions/{uid}', {
      ...at(org.uid),
      body: { name: 'openapi-subscription', sink: 'https://sink.example.com/arbor' },
    }),
  );
  const redeemer = await must(
    'redeemer',
    api.POST('/iam/v2beta1/identities/{uid}', {
      ...at(org.uid),
      body: { name: 'openapi-redeemer', claimMatch: { issuer: issuer.url, subject: 'r' } },
    }),
  );
  // The policy getDelegationPolicy's example reads (an identity without one answers NOT_FOUND).
  await must(
    'delegation policy',
    api.POST('/iam/v2beta1/identities:setDelegationPolicy', {
      body: { identityUid: identity.uid, actors: [redeemer.uid], capabilities: ['groups.list'] },
    }),
  );
  // The schedule getSchedule's example reads (a group without one answers NOT_FOUND).
  await must(
    'schedule',
    api.POST('/iam/v2beta1/accessReviews:setSchedule', {
      body: { groupUid: folder.uid, everyDays: 90 },
    }),
  );
  // The review the items example names (its stand-in is the folder's uid and a review's).
  const review = await must(
    'review',
    api.POST('/iam/v2beta1/accessReviews/{uid}', {
      ...at(folder.uid),
      body: { dueTime: new Date(Date.now() + 86_400_000).toISOString(), defaultDecision: 'keep' },
    }),
  );
  const real: Record<string, string> = {
    [`${EXAMPLE_UIDS.folder}/3b2a190807f6e5d4`]: review.uid,
    [EXAMPLE_UIDS.org]: org.uid,
    [EXAMPLE_UIDS.folder]: folder.uid,
    [EXAMPLE_UIDS.identity]: identity.uid,
    [EXAMPLE_UIDS.role]: role.uid,
    [EXAMPLE_UIDS.roleBinding]: binding.uid,
    [EXAMPLE_UIDS.repo]: repo.uid,
    [EXAMPLE_UIDS.tag]: tag.uid,
    [EXAMPLE_UIDS.identityProvider]: idp.uid,
    [EXAMPLE_UIDS.invite]: invite.uid,
    [EXAMPLE_UIDS.subscription]: subscription.uid,
    [EXAMPLE_INVITE_CODE]: invite.code!,
    [EXAMPLE_API_URL]: s.arbor.config.issuerUrl,
    [EXAMPLE_PATHS.folder]: 'openapi-org/openapi-folder',
    [EXAMPLE_PATHS.identity]: 'openapi-org/openapi-identity',
  };
  coversEveryStandIn(real);
  // Longest first: a child's stand-in begins with its parent's.
  const standIns = Object.keys(real).sort((a, b) => b.length - a.length);
  const sub: Substitute = (v) => {
    if (typeof v === 'string') return standIns.reduce((x, k) => x.replaceAll(k, real[k]!), v);
    if (Array.isArray(v)) return v.map(sub);
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, sub(x)]));
    return v;
  };
  return { sub, redeemer: redeemer.uid };
}

/** Every stand-in of examples.ts is covered, or an example could keep a fake uid. */
function coversEveryStandIn(real: Record<string, string>): void {
  for (const uid of Object.values(EXAMPLE_UIDS))
    if (!(uid in real)) throw new Error(`no resource stands for the example uid ${uid}`);
}

test.serial(
  'openapi: every example request is accepted by a fresh server, and answered as documented',
  async (t) => {
    const { sub, redeemer } = await exampleWorld();
    const validator = schemaValidator(doc);
    const upstream = await issuer.mint({ sub: SUBJECT, aud: s.arbor.config.issuerUrl });
    const redeemerToken = (await s.arbor.tokens.sign(redeemer, { iss: issuer.url, sub: 'r' }))
      .token;
    const withExamples = operationsOf(doc).filter(
      ({ op }) =>
        answersJson(op) &&
        (op.requestBody !== undefined ||
          (op.parameters ?? []).some((p) => p.in === 'query' && p.example !== undefined)),
    );
    // Creates first, then reads, then updates: an update names what a create made.
    const order = ['post', 'get', 'put', 'patch'];
    withExamples.sort((a, b) => order.indexOf(a.method) - order.indexOf(b.method));
    t.true(withExamples.length >= 60, `only ${withExamples.length} operations have examples`);
    for (const { method, path, op } of withExamples) {
      // A request is made by an identity with its own token (the admin token never asks), and
      // approve, deny and cancel each close one: access-requests.test.ts sends them all, with
      // the rules that decide them.
      if (/^iam\.accessRequests\.(create|approve|deny|cancel)$/.test(op.operationId)) continue;
      // A review's due time must lie ahead, which no fixed example can (its Create has none;
      // the populated test below opens one), and a decision names an item of an open review,
      // which no stand-in can: access-reviews.test.ts sends both, with the rules that decide them.
      if (/^iam\.accessReviews\.(create|decide)$/.test(op.operationId)) continue;
      // A token exchange takes a real subject token: oauth.test.ts sends it through openid-client.
      if (op.operationId === 'oauth.token') continue;
      // A revoke names a live token's jti, which no fixed example can: token-sessions.test.ts
      // sends it with a real one.
      if (op.operationId === 'iam.tokens.revoke') continue;
      const { url, init } = build(path, method, op, sub);
      if (op.operationId === 'sts.exchange' || op.operationId === 'sts.exchangeForm')
        init.headers.authorization = `Bearer ${upstream}`;
      else if (op.operationId === 'iam.groupInvites.redeem')
        init.headers.authorization = `Bearer ${redeemerToken}`;
      else if (op.operationId === 'registry.hooks.events')
        init.headers.authorization = `Bearer ${NOTIFY_TOKEN}`;
      else if (op.operationId === 'registry.auth.token')
        init.headers.authorization = `Basic ${Buffer.from(`_token:${ADMIN_TOKEN}`).toString('base64')}`;
      else init.headers.authorization = `Bearer ${ADMIN_TOKEN}`;
      const res = await fetch(s.url + url, init);
      const body: unknown = await res.json();
      t.is(res.status, 200, `${op.operationId} ${init.method} ${url}: ${JSON.stringify(body)}`);
      const valid = validator(responseSchema(op));
      t.true(valid(body), `${op.operationId}: ${JSON.stringify(valid.errors)}`);
    }
    // Proof that the examples did something: the examples' group exists under the org.
    const platform = await s.api.GET('/iam/v2beta1/groups', {
      params: { query: { name: 'platform' } },
    });
    t.is(platform.data?.groups.length, 1);
  },
);

test.serial(
  'openapi: every Get and List answer of a populated server matches its schema',
  async (t) => {
    await s.arbor.services.vulnerabilities.advisoryImport.import(
      ADMIN,
      fileURLToPath(new URL('../fixtures/osv', import.meta.url)),
    );
    const org = await must('org', s.api.POST('/iam/v2beta1/groups', { body: { name: 'shapes' } }));
    await s.api.PATCH('/iam/v2beta1/groups/{uid}', {
      params: { path: { uid: org.uid } },
      body: { description: 'an update the audit trail records' },
    });
    const advisories = await must(
      'advisories',
      s.api.GET('/vulnerabilities/v2beta1/advisories', { params: { query: {} } }),
    );
    t.true(advisories.advisories.length > 0);
    // The access lists are asked about a group and a capability, or an identity.
    const at = { params: { path: { uid: org.uid } } };
    const identity = await must(
      'identity',
      s.api.POST('/iam/v2beta1/identities/{uid}', {
        ...at,
        body: { name: 'shapes-identity', claimMatch: { issuer: issuer.url, subject: 'shapes' } },
      }),
    );
    await must(
      'binding',
      s.api.POST('/iam/v2beta1/roleBindings/{uid}', {
        ...at,
        body: { identityUid: identity.uid, roleUid: VIEWER },
      }),
    );
    // An access request is an identity's own: asked with its token, then listed by the admin.
    const token = (await s.arbor.tokens.sign(identity.uid, { iss: issuer.url, sub: 'shapes' }))
      .token;
    const request = await fetch(`${s.url}/iam/v2beta1/accessRequests/${org.uid}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ roleUid: VIEWER, durationSeconds: 3600, reason: 'shapes' }),
    });
    t.is(request.status, 200);
    // A review's items are asked by the review.
    const review = await fetch(`${s.url}/iam/v2beta1/accessReviews/${org.uid}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        dueTime: new Date(Date.now() + 86_400_000).toISOString(),
        defaultDecision: 'keep',
      }),
    });
    t.is(review.status, 200);
    const { uid: reviewUid } = (await review.json()) as { uid: string };
    const asked: Record<string, string> = {
      '/iam/v2beta1/accessReviews:items': `?review=${reviewUid}`,
      '/iam/v2beta1/access:whoCan': `?group=${org.uid}&capability=groups.list`,
      '/iam/v2beta1/access:whatCan': `?identity=${identity.uid}`,
      '/iam/v2beta1/groups:resolve': '?path=shapes',
      '/iam/v2beta1/identities:resolve': '?path=shapes/shapes-identity',
      '/iam/v2beta1/roles:resolve': '?name=viewer&group=shapes',
    };
    const validator = schemaValidator(doc);
    let checked = 0;
    for (const { method, path, op } of operationsOf(doc)) {
      // Authenticated reads only: the public ones answer no resource.
      if (method !== 'get' || op.security !== undefined || !answersJson(op)) continue;
      const example = op.parameters?.find((p) => p.in === 'path')?.example;
      // A Get of a kind this server has: the first item its List answers.
      let url = path;
      if (path.endsWith('{uid}')) {
        const list = await fetchJson(path.slice(0, -'/{uid}'.length));
        const items = (Object.values(list).find(Array.isArray) ?? []) as Array<
          Record<string, string>
        >;
        const first = items[0];
        if (!first) {
          t.fail(`${op.operationId}: nothing to get (example ${String(example)})`);
          continue;
        }
        url = path.replace('{uid}', first.uid ?? first.id ?? first.group ?? '');
      }
      const body = await fetchJson(url + (asked[path] ?? ''));
      const valid = validator(responseSchema(op));
      t.true(valid(body), `${op.operationId} ${url}: ${JSON.stringify(valid.errors)}`);
      checked++;
    }
    t.true(checked >= 30, `only ${checked} answers checked`);
    // And an error answer is the documented Status.
    const missing = await fetch(`${s.url}/iam/v2beta1/groups/${'0'.repeat(40)}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    t.is(missing.status, 404);
    t.true(validator({ $ref: '#/components/schemas/Status' })(await missing.json()));
  },
);

async function fetchJson(path: string): Promise<Record<string, unknown>> {
  const res = await fetch(s.url + path, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

test('openapi: operations under the bearer scheme refuse an anonymous caller; public ones do not', async (t) => {
  for (const { method, path, op } of operationsOf(doc)) {
    const res = await fetch(s.url + path.replace('{uid}', EXAMPLE_UIDS.org), {
      method: method.toUpperCase(),
    });
    await res.arrayBuffer();
    if (op.security === undefined) t.is(res.status, 401, `${op.operationId} without a token`);
    else if (op.security.length === 0 && !path.startsWith('/sts/'))
      t.not(res.status, 401, `${op.operationId} is public`);
  }
  t.deepEqual(doc.security, [{ bearer: [] }]);
});

test('openapi: the checked-in src/client/openapi.json is what the server serves', (t) => {
  const file = JSON.parse(
    readFileSync(new URL('../../src/client/openapi.json', import.meta.url), 'utf8'),
  ) as Doc;
  // Only the server's address may differ (it is the issuer URL of each process).
  t.deepEqual({ ...file, servers: [] }, { ...JSON.parse(JSON.stringify(doc)), servers: [] });
});

test('openapi: methods the document does not list are not served', async (t) => {
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const m of METHODS.filter((x) => !item[x])) {
      const res = await fetch(s.url + path.replace('{uid}', EXAMPLE_UIDS.org), {
        method: m.toUpperCase(),
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      await res.arrayBuffer();
      t.true([404, 405].includes(res.status), `${m.toUpperCase()} ${path}: ${res.status}`);
    }
  }
});

test('openapi: the typed client exchanges at the STS with a form body, as the benchmark does', async (t) => {
  const org = await must('org', s.api.POST('/iam/v2beta1/groups', { body: { name: 'sts-form' } }));
  const identity = await must(
    'identity',
    s.api.POST('/iam/v2beta1/identities/{uid}', {
      params: { path: { uid: org.uid } },
      body: { name: 'form', claimMatch: { issuer: issuer.url, subject: 'form-subject' } },
    }),
  );
  const aud = s.arbor.config.issuerUrl;
  const upstream = await issuer.mint({ sub: 'form-subject', aud });
  const { data, error } = await s.apiAs().POST('/sts/exchange', {
    body: { aud, identity: identity.uid },
    bodySerializer: formBody,
    headers: {
      authorization: `Bearer ${upstream}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
  });
  t.is(error, undefined);
  const me = await s.apiAs(data!.token).GET('/iam/v2beta1/identities/{uid}', {
    params: { path: { uid: identity.uid } },
  });
  // The token works and names the identity, which may always read itself (it has no binding).
  t.is(me.response.status, 200);
  t.is(me.data?.name, 'form');
  t.is(
    JSON.parse(Buffer.from(data!.token.split('.')[1]!, 'base64url').toString()).sub,
    identity.uid,
  );
});
