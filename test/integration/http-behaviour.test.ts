import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let cors: TestServer;
const APP = 'https://app.example.com';

test.before(async () => {
  s = await startServer();
  cors = await startServer({ ARBOR_CORS_ORIGINS: `${APP},http://localhost:3000` });
});
test.after.always(async () => {
  await s?.close();
  await cors?.close();
});

const G = '/iam/v2beta1/groups';

test('etag: Get and Update answer an ETag that changes with the resource', async (t) => {
  const org = await createGroup(s.admin, 'etag-org');
  const got = await s.admin.get(`${G}/${org}`);
  const etag = got.headers.get('etag');
  t.regex(etag ?? '', /^"[A-Za-z0-9_-]{27}"$/);
  t.is((await s.admin.get(`${G}/${org}`)).headers.get('etag'), etag, 'stable while unchanged');
  const updated = await s.admin.patch(`${G}/${org}?updateMask=description`, { description: 'x' });
  t.is(updated.status, 200);
  const after = updated.headers.get('etag');
  t.truthy(after);
  t.not(after, etag);
  t.is((await s.admin.get(`${G}/${org}`)).headers.get('etag'), after, 'Update tells the new one');
  // v1 carries the same header.
  t.truthy((await s.admin.get(`/iam/v1/groups/${org}`)).headers.get('etag'));
});

test('if-match: Update with a stale ETag is FAILED_PRECONDITION (412) and changes nothing', async (t) => {
  const org = await createGroup(s.admin, 'if-match-org');
  const stale = (await s.admin.get(`${G}/${org}`)).headers.get('etag')!;
  const ok = await s.admin.raw(`${G}/${org}?updateMask=description`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', 'if-match': stale },
    body: JSON.stringify({ description: 'first' }),
  });
  t.is(ok.status, 200);
  const lost = await s.admin.raw(`${G}/${org}?updateMask=description`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', 'if-match': stale },
    body: JSON.stringify({ description: 'second' }),
  });
  t.is(lost.status, 412);
  t.is(lost.body.code, 9);
  t.regex(lost.body.message, /^Precondition failed: /);
  t.is(lost.body.details[1]['@type'], 'type.googleapis.com/google.rpc.PreconditionFailure');
  t.is((await s.admin.get(`${G}/${org}`)).body.description, 'first');
  // `*` and a list with the current tag both match.
  const star = await s.admin.raw(`${G}/${org}?updateMask=description`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', 'if-match': '*' },
    body: JSON.stringify({ description: 'third' }),
  });
  t.is(star.status, 200);
  // An ETag names one representation: v1's differs from v2's.
  const v1 = (await s.admin.get(`/iam/v1/groups/${org}`)).headers.get('etag')!;
  t.not(v1, star.headers.get('etag'));
  const listed = await s.admin.raw(`/iam/v1/groups/${org}`, {
    method: 'PUT',
    headers: {
      'content-type': 'application/json',
      'if-match': `${stale}, ${v1}`,
    },
    body: JSON.stringify({ name: 'if-match-org', description: 'fourth' }),
  });
  t.is(listed.status, 200, JSON.stringify(listed.body));
});

test('if-match: Delete with a stale ETag keeps the resource; with the current one deletes it', async (t) => {
  const org = await createGroup(s.admin, 'if-match-delete');
  const stale = (await s.admin.get(`${G}/${org}`)).headers.get('etag')!;
  await s.admin.patch(`${G}/${org}?updateMask=description`, { description: 'moved on' });
  const refused = await s.admin.raw(`${G}/${org}`, {
    method: 'DELETE',
    headers: { 'if-match': stale },
  });
  t.is(refused.status, 412);
  t.is((await s.admin.get(`${G}/${org}`)).status, 200);
  const current = (await s.admin.get(`${G}/${org}`)).headers.get('etag')!;
  const deleted = await s.admin.raw(`${G}/${org}`, {
    method: 'DELETE',
    headers: { 'if-match': current },
  });
  t.is(deleted.status, 200);
  t.is((await s.admin.get(`${G}/${org}`)).status, 404);
});

test('if-match: of concurrent updates naming one version, exactly one wins', async (t) => {
  for (let round = 0; round < 4; round++) {
    const org = await createGroup(s.admin, `if-match-race-${round}`);
    const etag = (await s.admin.get(`${G}/${org}`)).headers.get('etag')!;
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        s.admin.raw(`${G}/${org}?updateMask=description`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/json', 'if-match': etag },
          body: JSON.stringify({ description: `writer ${i}` }),
        }),
      ),
    );
    t.is(replies.filter((r) => r.status === 200).length, 1);
    t.is(replies.filter((r) => r.status === 412).length, 11);
    const winner = replies.find((r) => r.status === 200)!;
    t.is((await s.admin.get(`${G}/${org}`)).body.description, winner.body.description);
  }
});

test('compression: a large list is sent br or gzip as asked; a small answer is not', async (t) => {
  const org = await createGroup(s.admin, 'compress-org');
  for (let i = 0; i < 30; i++) await createGroup(s.admin, `child-${i}`, org);
  const url = `${s.url}${G}?uidp.children_of=${org}&page_size=100`;
  const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
  for (const enc of ['br', 'gzip']) {
    const res = await fetch(url, { headers: { ...auth, 'accept-encoding': enc } });
    t.is(res.status, 200);
    t.is(res.headers.get('content-encoding'), enc);
    t.is(((await res.json()) as { groups: unknown[] }).groups.length, 30);
  }
  const plain = await fetch(url, { headers: { ...auth, 'accept-encoding': 'identity' } });
  t.is(plain.headers.get('content-encoding'), null);
  const small = await fetch(`${s.url}${G}/${org}`, {
    headers: { ...auth, 'accept-encoding': 'br' },
  });
  t.is(small.headers.get('content-encoding'), null);
});

test('cors: an allowed origin gets its preflight and headers; another gets none', async (t) => {
  const preflight = await fetch(`${cors.url}${G}`, {
    method: 'OPTIONS',
    headers: {
      origin: APP,
      'access-control-request-method': 'PATCH',
      'access-control-request-headers': 'authorization,if-match',
    },
  });
  t.is(preflight.status, 204);
  t.is(preflight.headers.get('access-control-allow-origin'), APP);
  t.regex(preflight.headers.get('access-control-allow-headers') ?? '', /if-match/);
  t.regex(preflight.headers.get('access-control-allow-methods') ?? '', /PATCH/);

  const get = await fetch(`${cors.url}${G}`, {
    headers: { origin: APP, authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  t.is(get.headers.get('access-control-allow-origin'), APP);
  t.regex(get.headers.get('access-control-expose-headers') ?? '', /etag/i);

  const evil = await fetch(`${cors.url}${G}`, {
    headers: { origin: 'https://evil.example.com', authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  t.is(evil.headers.get('access-control-allow-origin'), null);
  // Without configuration there are no CORS headers at all.
  const none = await fetch(`${s.url}${G}`, {
    headers: { origin: APP, authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  t.is(none.headers.get('access-control-allow-origin'), null);
});
