import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * A trailing slash never changes what a request means. `POST /iam/v2beta1/groups/` (what
 * `…/groups/$ORG` becomes when `$ORG` is empty) once created a root organization; a
 * missing path segment must be refused like one (404), on every route the server mounts.
 */
let s: TestServer;
let org: string;

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'slash-org');
});
test.after.always(() => s?.close());

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

async function operations(): Promise<Array<[Method, string]>> {
  const doc = (await s.admin.get('/openapi.json')).body as {
    paths: Record<string, Partial<Record<Method, unknown>>>;
  };
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    (Object.keys(ops) as Method[])
      .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
      .map((m): [Method, string] => [m, path]),
  );
}

async function rootGroups(): Promise<string[]> {
  const r = await s.admin.get('/iam/v2beta1/groups?page_size=200');
  return (r.body.groups as Array<{ uid: string }>).map((g) => g.uid).sort();
}

test('trailing slash: POST /iam/v2beta1/groups/ is a missing parent (404), not a root create', async (t) => {
  const before = await rootGroups();
  const r = await s.admin.post('/iam/v2beta1/groups/', { name: 'platform' });
  t.is(r.status, 404);
  t.is(r.body.code, 5);
  t.deepEqual(await rootGroups(), before, 'no organization was created');
});

test('trailing slash: no route answers 2xx with a slash added or a uid left empty', async (t) => {
  const ops = await operations();
  t.true(ops.length > 40, `the document lists the routes (${ops.length})`);
  const before = await rootGroups();
  const tried: string[] = [];
  for (const [method, template] of ops) {
    // `/x/{uid}` → `/x/` (an empty uid); `/x` → `/x/`; a real uid with a slash after it.
    const spellings = template.includes('{')
      ? [template.replace(/\{\w+\}/g, ''), template.replace(/\{\w+\}/g, `${org}/`)]
      : [`${template}/`];
    for (const path of spellings) {
      const r = await s.admin.raw(path, {
        method: method.toUpperCase(),
        headers: { 'content-type': 'application/json' },
        ...(method === 'get' || method === 'delete' ? {} : { body: '{"name":"platform"}' }),
      });
      tried.push(`${method} ${path}`);
      t.true(
        r.status === 404 || r.status === 400,
        `${method.toUpperCase()} ${path} answered ${r.status} ${JSON.stringify(r.body)}`,
      );
    }
  }
  t.true(tried.length > ops.length);
  t.deepEqual(await rootGroups(), before, 'nothing was created anywhere');
  // The slash-less spellings still work: the routes are not simply gone.
  t.is((await s.admin.get(`/iam/v2beta1/groups/${org}`)).status, 200);
  t.is((await s.admin.get('/iam/v2beta1/groups')).status, 200);
});
