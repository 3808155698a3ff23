import test from 'ava';
import { Authorizer, type Grant } from '../../src/auth/authorizer.js';
import type { Capability } from '../../src/auth/capabilities.js';
import type { Principal } from '../../src/auth/principal.js';
import { PageTokenCodec } from '../../src/core/page-token.js';
import { parseListRequest } from '../../src/core/list-request.js';
import { KnexRepoStore } from '../../src/db/stores/repo-store.js';
import { KnexUnitOfWork } from '../../src/db/unit-of-work.js';
import { ListPager } from '../../src/resources/list-pager.js';
import { REPO_LIST } from '../../src/resources/repos/repo.js';
import { RepoService } from '../../src/resources/repos/repo-service.js';
import { allPages, createGroup } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { NO_AUDIT } from '../../src/resources/audit/audit-log.js';

let s: TestServer;
test.before(async () => {
  s = await startServer();
});
test.after.always(async () => {
  await s?.close();
});

const R = '/registry/v2beta1/repos';
const DIGEST = `sha256:${'a'.repeat(64)}`;
type Repo = { uid: string; name: string; description: string; createTime: string };

async function createRepo(group: string, name: string, description?: string): Promise<Repo> {
  const res = await s.admin.post(`${R}/${group}`, { name, description });
  if (res.status !== 200) throw new Error(`create repo ${name}: ${JSON.stringify(res.body)}`);
  return res.body as Repo;
}

const fieldsOf = (body: any): string[] =>
  body.details[1].fieldViolations.map((v: { field: string }) => v.field).sort();

test('repos: create, get, and server-owned fields', async (t) => {
  const org = await createGroup(s.admin, 'repo-crud');
  const res = await s.admin.post(`${R}/${org}`, {
    name: 'nginx',
    description: 'web server',
    uid: 'f'.repeat(40),
    createTime: '2000-01-01T00:00:00.000Z',
  });
  t.is(res.status, 200);
  t.regex(res.body.uid, new RegExp(`^${org}/[0-9a-f]{16}$`));
  t.deepEqual(Object.keys(res.body).sort(), [
    'createTime',
    'description',
    'name',
    'uid',
    'updateTime',
  ]);
  t.like(res.body, { name: 'nginx', description: 'web server' });
  t.is(res.body.createTime, res.body.updateTime);
  t.not(res.body.createTime, '2000-01-01T00:00:00.000Z');
  const got = await s.admin.get(`${R}/${res.body.uid}`);
  t.deepEqual(got.body, res.body);
  const bare = await createRepo(org, 'python.3-slim_x');
  t.is(bare.description, '');
});

test('repos: validation names every failed field', async (t) => {
  const org = await createGroup(s.admin, 'repo-validation');
  const empty = await s.admin.post(`${R}/${org}`, {});
  t.is(empty.status, 400);
  t.is(empty.body.code, 3);
  t.is(empty.body.message, 'Invalid argument: name: name is required');
  t.like(empty.body.details[0], { reason: 'INVALID_ARGUMENT', domain: 'iam.arbor.dev' });
  for (const name of ['Nginx', 'a/b', '-lead', 'trail-', 'a..b', 'sp ace', '', 'x'.repeat(256)]) {
    const res = await s.admin.post(`${R}/${org}`, { name });
    t.is(res.status, 400, name);
    t.deepEqual(fieldsOf(res.body), ['name'], name);
  }
  const pattern = await s.admin.post(`${R}/${org}`, { name: 'Bad' });
  t.is(
    pattern.body.message,
    'Invalid argument: name: name must be lowercase letters a-z and digits, in parts joined by one dot, dash or underscore',
  );
  t.is((await s.admin.post(`${R}/${org}`, { name: 'x'.repeat(255) })).status, 200);
  const many = await s.admin.post(`${R}/${org}`, { name: 7, description: 'a\nb', tier: 'gold' });
  t.deepEqual(fieldsOf(many.body), ['description', 'name', 'tier']);
});

test('repos: parent must be an existing group; names are unique per group', async (t) => {
  const org = await createGroup(s.admin, 'repo-unique');
  const other = await createGroup(s.admin, 'repo-unique-2');
  const missing = await s.admin.post(`${R}/${'0'.repeat(40)}`, { name: 'orphan' });
  t.is(missing.status, 404);
  t.is(missing.body.code, 5);
  const malformed = await s.admin.post(`${R}/not-a-uid`, { name: 'orphan' });
  t.is(malformed.status, 400);
  t.deepEqual(fieldsOf(malformed.body), ['parent']);
  const repo = await createRepo(org, 'dup');
  const underRepo = await s.admin.post(`${R}/${repo.uid}`, { name: 'nested' });
  t.is(underRepo.status, 404);
  const dup = await s.admin.post(`${R}/${org}`, { name: 'dup' });
  t.is(dup.status, 409);
  t.is(dup.body.code, 6);
  t.regex(dup.body.message, /^Already exists: /);
  t.is((await s.admin.post(`${R}/${other}`, { name: 'dup' })).status, 200);
});

test('repos: update with and without a mask; renames respect uniqueness', async (t) => {
  const org = await createGroup(s.admin, 'repo-update');
  const repo = await createRepo(org, 'before', 'old');
  await createRepo(org, 'taken');
  await new Promise((r) => setTimeout(r, 5));
  const patched = await s.admin.patch(`${R}/${repo.uid}`, { description: 'new' });
  t.is(patched.status, 200);
  t.like(patched.body, { uid: repo.uid, name: 'before', description: 'new' });
  t.is(patched.body.createTime, repo.createTime);
  t.true(Date.parse(patched.body.updateTime) > Date.parse(repo.createTime));
  const masked = await s.admin.patch(`${R}/${repo.uid}?updateMask=name`, {
    name: 'after',
    description: 'ignored',
  });
  t.like(masked.body, { name: 'after', description: 'new' });
  const cleared = await s.admin.patch(`${R}/${repo.uid}?update_mask=description`, {});
  t.is(cleared.body.description, '');
  const clash = await s.admin.patch(`${R}/${repo.uid}`, { name: 'taken' });
  t.is(clash.status, 409);
  for (const mask of ['uid', 'createTime', 'tier']) {
    const res = await s.admin.patch(`${R}/${repo.uid}?updateMask=${mask}`, {});
    t.is(res.status, 400, mask);
    t.deepEqual(fieldsOf(res.body), ['update_mask']);
  }
  t.is((await s.admin.patch(`${R}/${repo.uid}`, { name: 'UPPER' })).status, 400);
  t.is((await s.admin.patch(`${R}/${org}/${'9'.repeat(16)}`, { description: 'x' })).status, 404);
  t.is((await s.admin.get(`${R}/${repo.uid}`)).body.name, 'after');
});

test('repos: delete, and a group holding repos cannot be deleted', async (t) => {
  const org = await createGroup(s.admin, 'repo-delete');
  const repo = await createRepo(org, 'doomed');
  const refused = await s.admin.delete(`/iam/v2beta1/groups/${org}`);
  t.is(refused.status, 400);
  t.is(refused.body.code, 9);
  t.is(refused.body.message, 'Precondition failed: cannot delete group with child repos');
  t.like(refused.body.details[0], { reason: 'FAILED_PRECONDITION' });
  t.is(refused.body.details[1].violations[0].type, 'RESOURCE_NOT_EMPTY');
  const del = await s.admin.delete(`${R}/${repo.uid}`);
  t.is(del.status, 200);
  t.deepEqual(del.body, {});
  t.is((await s.admin.get(`${R}/${repo.uid}`)).status, 404);
  t.is((await s.admin.delete(`${R}/${repo.uid}`)).status, 404);
  t.is((await s.admin.delete(`/iam/v2beta1/groups/${org}`)).status, 200);
});

test('repos: a repo holding tags cannot be deleted', async (t) => {
  const org = await createGroup(s.admin, 'repo-with-tags');
  const repo = await createRepo(org, 'tagged');
  const tag = await s.admin.post(`/registry/v2beta1/tags/${repo.uid}`, {
    name: 'latest',
    digest: DIGEST,
  });
  t.is(tag.status, 200);
  const refused = await s.admin.delete(`${R}/${repo.uid}`);
  t.is(refused.status, 400);
  t.is(refused.body.code, 9);
  t.is(refused.body.message, 'Precondition failed: cannot delete repo with child tags');
  t.is(refused.body.details[1].violations[0].type, 'RESOURCE_NOT_EMPTY');
  t.is((await s.admin.get(`${R}/${repo.uid}`)).status, 200);
  t.is((await s.admin.delete(`/registry/v2beta1/tags/${tag.body.uid}`)).status, 200);
  t.is((await s.admin.delete(`${R}/${repo.uid}`)).status, 200);
});

test('repos: the list contract (order, pages, skip, totalCount, filters)', async (t) => {
  const org = await createGroup(s.admin, 'repo-list');
  const sub = await createGroup(s.admin, 'repo-list-sub', org);
  const names: string[] = [];
  for (let i = 0; i < 23; i++) {
    const name = `img-${String((i * 7) % 23).padStart(2, '0')}`;
    names.push(name);
    await createRepo(org, name);
  }
  await createRepo(sub, 'deep');
  const q = `${R}?uidp.children_of=${org}`;
  const asc = await allPages<Repo>(s.admin, `${q}&order_by=name&page_size=10`, 'repos');
  t.deepEqual(
    asc.map((p) => p.length),
    [10, 10, 3],
  );
  t.deepEqual(
    asc.flat().map((r) => r.name),
    [...names].sort(),
  );
  const desc = await allPages<Repo>(s.admin, `${q}&order_by=name%20desc&page_size=6`, 'repos');
  t.deepEqual(
    desc.flat().map((r) => r.name),
    [...names].sort().reverse(),
  );
  const created = (
    await allPages<Repo>(s.admin, `${q}&order_by=created_at&page_size=4`, 'repos')
  ).flat();
  t.deepEqual(created.map((r) => r.name).sort(), [...names].sort());
  const key = (r: Repo) => `${r.createTime} ${r.uid}`;
  t.deepEqual(created.map(key), created.map(key).sort());
  const byUid = (await allPages<Repo>(s.admin, q, 'repos')).flat().map((r) => r.uid);
  t.deepEqual(byUid, [...byUid].sort());

  const first = await s.admin.get(`${q}&page_size=5`);
  t.is(first.body.totalCount, '23');
  t.is(first.body.skipped, 0);
  t.is(first.body.repos.length, 5);
  t.truthy(first.body.nextPageToken);
  const skipped = await s.admin.get(`${q}&order_by=name&skip=20&page_size=5`);
  t.is(skipped.body.skipped, 20);
  t.deepEqual(
    skipped.body.repos.map((r: Repo) => r.name),
    [...names].sort().slice(20),
  );
  t.false('nextPageToken' in skipped.body);

  const below = await s.admin.get(`${R}?uidp.descendants_of=${org}&page_size=200`);
  t.is(below.body.totalCount, '24');
  const exact = await s.admin.get(`${R}?uidp.descendants_of=${org}&name=deep`);
  t.deepEqual(
    exact.body.repos.map((r: Repo) => r.name),
    ['deep'],
  );
  t.is((await s.admin.get(`${R}?uidp.descendants_of=${org}&name=dee`)).body.totalCount, '0');
  for (const [bad, field] of [
    ['order_by=description', 'order_by'],
    ['digest=x', 'digest'],
    ['uidp.children_of=nope', 'uidp.children_of'],
  ]) {
    const res = await s.admin.get(`${R}?${bad}`);
    t.is(res.status, 400, bad);
    t.deepEqual(fieldsOf(res.body), [field]);
  }
});

test('repos: v1 lists {items} with id, createdAt and updatedAt', async (t) => {
  const org = await createGroup(s.admin, 'repo-v1');
  const repo = await createRepo(org, 'legacy', 'v1 shape');
  const res = await s.admin.get(`/registry/v1/repos?uidp.children_of=${org}`);
  t.is(res.status, 200);
  t.deepEqual(res.body, {
    items: [
      {
        id: repo.uid,
        name: 'legacy',
        description: 'v1 shape',
        createdAt: repo.createTime,
        updatedAt: repo.createTime,
      },
    ],
  });
  const one = await s.admin.get(`/registry/v1/repos?id=${encodeURIComponent(repo.uid)}`);
  t.is(one.body.items[0].id, repo.uid);
  const none = await s.admin.get(`/registry/v1/repos?id=${org}/${'0'.repeat(16)}`);
  t.deepEqual(none.body, { items: [] });
});

/** The service with an authorizer fed fixed grants, for checks the admin token cannot make. */
function serviceWithGrants(grants: Grant[]): RepoService {
  const uow = new KnexUnitOfWork(s.db.knex);
  const authz = new Authorizer({ grantsOf: () => Promise.resolve(grants) });
  const pager = new ListPager(new PageTokenCodec(Buffer.alloc(32, 7)));
  return new RepoService({ uow, repos: new KnexRepoStore(), authz, pager, audit: NO_AUDIT });
}
const grant = (scope: string, ...caps: Capability[]): Grant => ({
  scope,
  capabilities: new Set(caps),
});
const someone: Principal = { kind: 'identity', uid: `${'e'.repeat(40)}/${'1'.repeat(16)}` };

test('repos: access follows repo.* capabilities at the group and below', async (t) => {
  const mine = await createGroup(s.admin, 'repo-authz-mine');
  const theirs = await createGroup(s.admin, 'repo-authz-theirs');
  const visible = await createRepo(mine, 'visible');
  const hidden = await createRepo(theirs, 'hidden');
  const svc = serviceWithGrants([grant(mine, 'repo.list', 'groups.list')]);
  const page = await svc.list(someone, parseListRequest({}, REPO_LIST));
  t.deepEqual(
    page.items.map((r) => r.uid),
    [visible.uid],
  );
  t.is((await svc.get(someone, visible.uid)).name, 'visible');
  await t.throwsAsync(svc.get(someone, hidden.uid), { message: /^Not found/ });
  await t.throwsAsync(svc.create(someone, mine, { name: 'new' }), {
    message: 'Permission denied: missing capability repo.create',
  });
  await t.throwsAsync(svc.create(someone, theirs, { name: 'new' }), { message: /^Not found/ });
  await t.throwsAsync(svc.delete(someone, visible.uid), { message: /^Permission denied/ });
  await t.throwsAsync(svc.delete(someone, hidden.uid), { message: /^Not found/ });
});
