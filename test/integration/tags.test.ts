import test from 'ava';
import { Authorizer, type Grant } from '../../src/auth/authorizer.js';
import type { Capability } from '../../src/auth/capabilities.js';
import type { Principal } from '../../src/auth/principal.js';
import { parseListRequest } from '../../src/core/list-request.js';
import { PageTokenCodec } from '../../src/core/page-token.js';
import { KnexTagStore } from '../../src/db/stores/tag-store.js';
import { KnexUnitOfWork } from '../../src/db/unit-of-work.js';
import { ListPager } from '../../src/resources/list-pager.js';
import { TAG_LIST } from '../../src/resources/tags/tag.js';
import { TagService } from '../../src/resources/tags/tag-service.js';
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

const T = '/registry/v2beta1/tags';
type Tag = { uid: string; name: string; digest: string; deprecated: boolean; updateTime: string };
const digest = (c: string) => `sha256:${c.repeat(64)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fieldsOf = (body: any): string[] =>
  body.details[1].fieldViolations.map((v: { field: string }) => v.field).sort();

async function newRepo(name: string): Promise<{ org: string; repo: string }> {
  const org = await createGroup(s.admin, `tags-${name}`);
  const res = await s.admin.post(`/registry/v2beta1/repos/${org}`, { name });
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  return { org, repo: res.body.uid as string };
}

async function push(repo: string, body: Record<string, unknown>): Promise<Tag> {
  const res = await s.admin.post(`${T}/${repo}`, body);
  if (res.status !== 200) throw new Error(`push: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as Tag;
}

test('tags: create under a repo; the wire has createTime and updateTime like every resource', async (t) => {
  const { repo } = await newRepo('create');
  const res = await s.admin.post(`${T}/${repo}`, { name: 'latest', digest: digest('a') });
  t.is(res.status, 200);
  t.regex(res.body.uid, new RegExp(`^${repo}/[0-9a-f]{16}$`));
  t.deepEqual(Object.keys(res.body).sort(), [
    'createTime',
    'deprecated',
    'digest',
    'name',
    'uid',
    'updateTime',
  ]);
  t.regex(res.body.createTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.like(res.body, { name: 'latest', digest: digest('a'), deprecated: false });
  t.regex(res.body.updateTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.deepEqual((await s.admin.get(`${T}/${res.body.uid}`)).body, res.body);
});

test('tags: pushing an existing name moves it: same uid, new digest, later updateTime', async (t) => {
  const { repo } = await newRepo('upsert');
  const first = await push(repo, { name: 'v1.2', digest: digest('a'), deprecated: true });
  await sleep(5);
  const moved = await push(repo, { name: 'v1.2', digest: digest('b'), uid: 'ignored' });
  t.is(moved.uid, first.uid);
  t.is(moved.digest, digest('b'));
  t.true(moved.deprecated, 'deprecated is kept when the push leaves it out');
  t.true(Date.parse(moved.updateTime) > Date.parse(first.updateTime));
  const undeprecated = await push(repo, { name: 'v1.2', digest: digest('b'), deprecated: false });
  t.false(undeprecated.deprecated);
  const list = await s.admin.get(`${T}?uidp.children_of=${repo}`);
  t.is(list.body.totalCount, '1');
  t.deepEqual(list.body.tags[0], undeprecated);
});

test('tags: validation names every failed field', async (t) => {
  const { repo } = await newRepo('validation');
  const empty = await s.admin.post(`${T}/${repo}`, {});
  t.is(empty.status, 400);
  t.is(empty.body.code, 3);
  t.deepEqual(fieldsOf(empty.body), ['digest', 'name']);
  for (const name of ['-x', '.x', 'a/b', 'a:b', '', 'x'.repeat(129)]) {
    const res = await s.admin.post(`${T}/${repo}`, { name, digest: digest('a') });
    t.deepEqual(fieldsOf(res.body), ['name'], name);
  }
  t.is(
    (await s.admin.post(`${T}/${repo}`, { name: 'x'.repeat(128), digest: digest('a') })).status,
    200,
  );
  for (const d of [
    'sha256:ABC',
    `sha512:${'a'.repeat(64)}`,
    `sha256:${'A'.repeat(64)}`,
    'latest',
  ]) {
    const res = await s.admin.post(`${T}/${repo}`, { name: 'ok', digest: d });
    t.deepEqual(fieldsOf(res.body), ['digest'], d);
  }
  const bad = await s.admin.post(`${T}/${repo}`, {
    name: 'ok',
    digest: digest('a'),
    deprecated: 'yes',
    bundles: [],
  });
  t.deepEqual(fieldsOf(bad.body), ['bundles', 'deprecated']);
  t.is(
    (await s.admin.post(`${T}/${repo}`, { name: 'ok', digest: 'x' })).body.message,
    'Invalid argument: digest: digest must be sha256: followed by 64 lowercase hexadecimal digits',
  );
});

test('tags: the parent must be an existing repo', async (t) => {
  const { org, repo } = await newRepo('parent');
  // Change the last digit (to one it is not), so the uid is one that cannot exist.
  const missing = await s.admin.post(`${T}/${repo.slice(0, -1)}${repo.endsWith('0') ? '1' : '0'}`, {
    name: 'x',
    digest: digest('a'),
  });
  t.is(missing.status, 404);
  t.is(missing.body.details[1].resourceType, 'registry.arbor.dev/Repo');
  t.is((await s.admin.post(`${T}/${org}`, { name: 'x', digest: digest('a') })).status, 404);
  const malformed = await s.admin.post(`${T}/nope`, { name: 'x', digest: digest('a') });
  t.is(malformed.status, 400);
  t.deepEqual(fieldsOf(malformed.body), ['parent']);
});

test('tags: get and delete; there is no PATCH', async (t) => {
  const { repo } = await newRepo('delete');
  const tag = await push(repo, { name: 'gone', digest: digest('c') });
  t.is((await s.admin.patch(`${T}/${tag.uid}`, { digest: digest('d') })).status, 405);
  const del = await s.admin.delete(`${T}/${tag.uid}`);
  t.is(del.status, 200);
  t.deepEqual(del.body, {});
  const after = await s.admin.get(`${T}/${tag.uid}`);
  t.is(after.status, 404);
  t.is(after.body.details[1].resourceType, 'registry.arbor.dev/Tag');
  t.is((await s.admin.delete(`${T}/${tag.uid}`)).status, 404);
  t.is((await s.admin.get(`${T}/bad`)).status, 400);
});

test('tags: the list contract (children_of a repo, order, pages, skip, filters)', async (t) => {
  const { org, repo } = await newRepo('list');
  const other = (await s.admin.post(`/registry/v2beta1/repos/${org}`, { name: 'other' })).body.uid;
  const names: string[] = [];
  for (let i = 0; i < 17; i++) {
    const name = `t${String((i * 5) % 17).padStart(2, '0')}`;
    names.push(name);
    await push(repo, { name, digest: digest(i % 3 === 0 ? 'e' : 'f') });
  }
  await push(other, { name: 't00', digest: digest('e') });
  const q = `${T}?uidp.children_of=${repo}`;
  const asc = await allPages<Tag>(s.admin, `${q}&order_by=name&page_size=5`, 'tags');
  t.deepEqual(
    asc.map((p) => p.length),
    [5, 5, 5, 2],
  );
  t.deepEqual(
    asc.flat().map((x) => x.name),
    [...names].sort(),
  );
  const desc = await allPages<Tag>(s.admin, `${q}&order_by=name%20desc&page_size=4`, 'tags');
  t.deepEqual(
    desc.flat().map((x) => x.name),
    [...names].sort().reverse(),
  );
  // Re-push one tag: it moves to the end of updated_at order, not of created_at order.
  await sleep(5);
  const moved = await push(repo, { name: names[0]!, digest: digest('9') });
  const byUpdate = (
    await allPages<Tag>(s.admin, `${q}&order_by=updated_at&page_size=6`, 'tags')
  ).flat();
  t.is(byUpdate.at(-1)!.uid, moved.uid);
  const key = (x: Tag) => `${x.updateTime} ${x.uid}`;
  t.deepEqual(byUpdate.map(key), byUpdate.map(key).sort());
  const byCreate = (await allPages<Tag>(s.admin, `${q}&order_by=created_at%20desc`, 'tags')).flat();
  t.not(byCreate[0]!.uid, moved.uid);
  const byUid = (await allPages<Tag>(s.admin, `${q}&page_size=3`, 'tags')).flat().map((x) => x.uid);
  t.deepEqual(byUid, [...byUid].sort());

  const page = await s.admin.get(`${q}&order_by=name&skip=15&page_size=5`);
  t.is(page.body.totalCount, '17');
  t.is(page.body.skipped, 15);
  t.deepEqual(
    page.body.tags.map((x: Tag) => x.name),
    [...names].sort().slice(15),
  );
  const byDigest = await s.admin.get(`${q}&digest=${digest('e')}`);
  t.is(byDigest.body.totalCount, String(names.filter((_, i) => i % 3 === 0 && i !== 0).length));
  const everywhere = await s.admin.get(`${T}?uidp.descendants_of=${org}&name=t00`);
  t.is(everywhere.body.totalCount, '2');
  const inRepo = await s.admin.get(`${q}&name=t00`);
  t.is(inRepo.body.totalCount, '1');
  for (const [bad, field] of [
    ['order_by=digest', 'order_by'],
    ['order_by=update_time', 'order_by'],
    ['deprecated=true', 'deprecated'],
  ]) {
    const res = await s.admin.get(`${T}?${bad}`);
    t.is(res.status, 400, bad);
    t.deepEqual(fieldsOf(res.body), [field]);
  }
});

function serviceWithGrants(grants: Grant[]): TagService {
  const uow = new KnexUnitOfWork(s.db.knex);
  const authz = new Authorizer({ grantsOf: () => Promise.resolve(grants) });
  const pager = new ListPager(new PageTokenCodec(Buffer.alloc(32, 9)));
  return new TagService({ uow, tags: new KnexTagStore(), authz, pager, audit: NO_AUDIT });
}
const grant = (scope: string, ...caps: Capability[]): Grant => ({
  scope,
  capabilities: new Set(caps),
});
const puller: Principal = { kind: 'identity', uid: `${'d'.repeat(40)}/${'2'.repeat(16)}` };

test('tags: access is decided at the repo, covered by grants on its group', async (t) => {
  const mine = await newRepo('authz-mine');
  const theirs = await newRepo('authz-theirs');
  const visible = await push(mine.repo, { name: 'seen', digest: digest('1') });
  const hidden = await push(theirs.repo, { name: 'unseen', digest: digest('2') });
  const svc = serviceWithGrants([grant(mine.org, 'tag.list', 'repo.list')]);
  const page = await svc.list(puller, parseListRequest({}, TAG_LIST));
  t.deepEqual(
    page.items.map((x) => x.uid),
    [visible.uid],
  );
  t.is((await svc.get(puller, visible.uid)).name, 'seen');
  await t.throwsAsync(svc.get(puller, hidden.uid), { message: /^Not found/ });
  await t.throwsAsync(svc.create(puller, mine.repo, { name: 'new', digest: digest('3') }), {
    message: 'Permission denied: missing capability tag.create',
  });
  await t.throwsAsync(svc.create(puller, theirs.repo, { name: 'new', digest: digest('3') }), {
    message: /^Not found/,
  });
  const pusher = serviceWithGrants([grant(mine.org, 'tag.create', 'tag.list', 'repo.list')]);
  t.is((await pusher.create(puller, mine.repo, { name: 'new', digest: digest('3') })).name, 'new');
  await t.throwsAsync(pusher.delete(puller, visible.uid), { message: /^Permission denied/ });
});
