import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { Authorizer } from '../../src/auth/authorizer.js';
import { ADMIN, type Principal } from '../../src/auth/principal.js';
import { parseListRequest } from '../../src/core/list-request.js';
import { PageTokenCodec } from '../../src/core/page-token.js';
import { KnexAdvisoryStore } from '../../src/db/stores/advisory-store.js';
import { KnexUnitOfWork } from '../../src/db/unit-of-work.js';
import { ADVISORY_LIST } from '../../src/resources/advisories/advisory.js';
import { AdvisoryService } from '../../src/resources/advisories/advisory-service.js';
import { ListPager } from '../../src/resources/list-pager.js';
import { allPages } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
test.before(async () => {
  s = await startServer();
  await s.arbor.services.vulnerabilities.advisoryImport.import(
    ADMIN,
    fileURLToPath(new URL('../fixtures/osv', import.meta.url)),
  );
});
test.after.always(async () => {
  await s?.close();
});

const A = '/vulnerabilities/v2beta1/advisories';
const sha1 = (id: string) => createHash('sha1').update(id).digest('hex');
type Advisory = { uid: string; id: string; createTime: string; modified: string };
const ids = (body: { advisories: Advisory[] }) => body.advisories.map((a) => a.id);
const fieldsOf = (body: any): string[] =>
  body.details[1].fieldViolations.map((v: { field: string }) => v.field);

test('advisories: get renders the OSV record in camelCase with the uniform fields', async (t) => {
  const res = await s.admin.get(`${A}/${sha1('GHSA-7f3q-2m8v-x9c4')}`);
  t.is(res.status, 200);
  t.like(res.body, {
    uid: sha1('GHSA-7f3q-2m8v-x9c4'),
    id: 'GHSA-7f3q-2m8v-x9c4',
    aliases: ['CVE-2024-31337'],
    summary: 'Prototype pollution in tiny-yaml-merge when merging anchors',
    severityLevel: 'CRITICAL',
    schemaVersion: '1.6.0',
    published: '2024-04-30T18:02:11.000Z',
    modified: '2024-05-14T09:12:44.000Z',
    createTime: '2024-04-30T18:02:11.000Z',
    updateTime: '2024-05-14T09:12:44.000Z',
  });
  t.regex(res.body.details, /^Versions of `tiny-yaml-merge` before 2\.4\.1/);
  t.deepEqual(res.body.severity, [
    { type: 'CVSS_V3', score: 'CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H' },
  ]);
  t.deepEqual(res.body.affected[0].package, {
    ecosystem: 'npm',
    name: 'tiny-yaml-merge',
    purl: 'pkg:npm/tiny-yaml-merge',
  });
  t.deepEqual(res.body.affected[0].ranges, [
    { type: 'SEMVER', events: [{ introduced: '0' }, { fixed: '2.4.1' }] },
  ]);
  t.true('databaseSpecific' in res.body.affected[0]);
  t.is(res.body.references.length, 3);
  t.like(res.body.databaseSpecific, { cwe_ids: ['CWE-1321'], github_reviewed: true });
  t.false('database_specific' in res.body);
  t.false('withdrawn' in res.body);
});

test('advisories: severity level from CVSS v3, else the database rating, else none', async (t) => {
  const get = async (id: string) => (await s.admin.get(`${A}/${sha1(id)}`)).body;
  t.is((await get('CGA-3xj2-8p4v-w7rq')).severityLevel, 'HIGH');
  t.is((await get('DLA-3999-1')).severityLevel, 'LOW');
  // CVSS v4 only: scored (6.9), MEDIUM, as GitHub's MODERATE rating also says.
  const v4 = await get('GHSA-qr4h-9c2w-m5jx');
  t.is(v4.severityLevel, 'MEDIUM');
  t.is(v4.modified, '2025-02-03T11:40:05.512Z');
  t.deepEqual(v4.credits, [{ name: 'A. Researcher', type: 'FINDER' }]);
  const go = await get('GO-2024-3107');
  t.false('severityLevel' in go);
  t.deepEqual(go.severity, []);
  t.deepEqual(go.affected[0].ecosystemSpecific.imports[0].symbols, ['Handler.ServeHTTP']);
  const dla = await get('DLA-3999-1');
  t.deepEqual(dla.affected[0].ranges[0].events, [
    { introduced: '0' },
    { lastAffected: '3.0.11-1~deb12u2' },
  ]);
});

test('advisories: get of a malformed or unknown uid', async (t) => {
  const bad = await s.admin.get(`${A}/GHSA-7f3q-2m8v-x9c4`);
  t.is(bad.status, 400);
  t.deepEqual(fieldsOf(bad.body), ['uid']);
  const missing = await s.admin.get(`${A}/${'0'.repeat(40)}`);
  t.is(missing.status, 404);
  t.is(missing.body.details[1].resourceType, 'vulnerabilities.arbor.dev/Advisory');
});

test('advisories: the list envelope, default uid order, paging and skip', async (t) => {
  const all = await s.admin.get(A);
  t.is(all.status, 200);
  t.is(all.body.totalCount, '5');
  t.is(all.body.skipped, 0);
  t.false('nextPageToken' in all.body);
  const uids = all.body.advisories.map((a: Advisory) => a.uid);
  t.deepEqual(uids, [...uids].sort());
  const pages = await allPages<Advisory>(s.admin, `${A}?page_size=2`, 'advisories');
  t.deepEqual(
    pages.map((p) => p.length),
    [2, 2, 1],
  );
  t.deepEqual(
    pages.flat().map((a) => a.uid),
    uids,
  );
  const skipped = await s.admin.get(`${A}?skip=3&page_size=1`);
  t.is(skipped.body.skipped, 3);
  t.deepEqual(
    skipped.body.advisories.map((a: Advisory) => a.uid),
    [uids[3]],
  );
  t.truthy(skipped.body.nextPageToken);
});

test('advisories: order by name, created_at (published) and modified, both ways', async (t) => {
  const byName = [
    'CGA-3xj2-8p4v-w7rq',
    'DLA-3999-1',
    'GHSA-7f3q-2m8v-x9c4',
    'GHSA-qr4h-9c2w-m5jx',
    'GO-2024-3107',
  ];
  const byPublished = [
    'GHSA-7f3q-2m8v-x9c4',
    'GO-2024-3107',
    'CGA-3xj2-8p4v-w7rq',
    'DLA-3999-1',
    'GHSA-qr4h-9c2w-m5jx',
  ];
  const byModified = byPublished;
  for (const [order, expected] of [
    ['name', byName],
    ['created_at', byPublished],
    ['modified', byModified],
  ] as const) {
    const asc = await allPages<Advisory>(
      s.admin,
      `${A}?order_by=${order}&page_size=2`,
      'advisories',
    );
    t.deepEqual(
      asc.flat().map((a) => a.id),
      expected,
      order,
    );
    const desc = await allPages<Advisory>(
      s.admin,
      `${A}?order_by=${order}%20desc&page_size=3`,
      'advisories',
    );
    t.deepEqual(
      desc.flat().map((a) => a.id),
      [...expected].reverse(),
      `${order} desc`,
    );
  }
  t.is((await s.admin.get(`${A}?order_by=summary`)).status, 400);
});

test('advisories: id matches the OSV id or any alias', async (t) => {
  t.deepEqual(ids((await s.admin.get(`${A}?id=GO-2024-3107`)).body), ['GO-2024-3107']);
  const cve = await s.admin.get(`${A}?id=CVE-2024-55501&order_by=name`);
  t.deepEqual(ids(cve.body), ['CGA-3xj2-8p4v-w7rq', 'DLA-3999-1']);
  t.is(cve.body.totalCount, '2');
  t.deepEqual(ids((await s.admin.get(`${A}?id=PYSEC-2025-17`)).body), ['GHSA-qr4h-9c2w-m5jx']);
  t.deepEqual(ids((await s.admin.get(`${A}?id=CVE-2024`)).body), []);
});

test('advisories: package and ecosystem filter the same affected entry', async (t) => {
  const q = async (params: string) => ids((await s.admin.get(`${A}?order_by=name&${params}`)).body);
  t.deepEqual(await q('package=libexample-tls'), ['CGA-3xj2-8p4v-w7rq', 'DLA-3999-1']);
  t.deepEqual(await q('ecosystem=Wolfi'), ['CGA-3xj2-8p4v-w7rq']);
  t.deepEqual(await q('ecosystem=Debian'), ['DLA-3999-1']);
  t.deepEqual(await q('ecosystem=Debian:12'), ['DLA-3999-1']);
  t.deepEqual(await q('ecosystem=Debian:11'), []);
  t.deepEqual(await q('package=libexample-tls&ecosystem=Debian'), ['DLA-3999-1']);
  t.deepEqual(await q('package=libexample-tls&ecosystem=npm'), []);
  t.deepEqual(await q('package=tiny-yaml-merge&ecosystem=npm'), ['GHSA-7f3q-2m8v-x9c4']);
  t.deepEqual(await q('package=example.com%2Ffakerouter'), ['GO-2024-3107']);
  t.deepEqual(await q('package=libexample-tls&severity=HIGH'), ['CGA-3xj2-8p4v-w7rq']);
});

test('advisories: severity filter takes the four levels in any case', async (t) => {
  const q = async (level: string) => ids((await s.admin.get(`${A}?severity=${level}`)).body);
  t.deepEqual(await q('CRITICAL'), ['GHSA-7f3q-2m8v-x9c4']);
  t.deepEqual(await q('high'), ['CGA-3xj2-8p4v-w7rq']);
  t.deepEqual(await q('Medium'), ['GHSA-qr4h-9c2w-m5jx']);
  t.deepEqual(await q('LOW'), ['DLA-3999-1']);
  for (const bad of ['severity=MODERATE', 'uidp.children_of=' + 'a'.repeat(40), 'colour=red']) {
    const res = await s.admin.get(`${A}?${bad}`);
    t.is(res.status, 400, bad);
    t.deepEqual(fieldsOf(res.body), [bad.split('=')[0]]);
  }
});

test('advisories: read-only over REST', async (t) => {
  const uid = sha1('GO-2024-3107');
  t.is((await s.admin.post(A, { id: 'GHSA-xxxx-xxxx-xxxx' })).status, 405);
  t.is((await s.admin.patch(`${A}/${uid}`, { summary: 'x' })).status, 405);
  t.is((await s.admin.delete(`${A}/${uid}`)).status, 405);
  t.is((await s.client().get(A)).status, 401);
});

test('advisories: any advisories.list grant shows them all; none shows nothing', async (t) => {
  const reader: Principal = { kind: 'identity', uid: `${'c'.repeat(40)}/${'3'.repeat(16)}` };
  const service = (caps: string[]) =>
    new AdvisoryService({
      uow: new KnexUnitOfWork(s.db.knex),
      advisories: new KnexAdvisoryStore(),
      authz: new Authorizer({
        grantsOf: () =>
          Promise.resolve([{ scope: 'c'.repeat(40), capabilities: new Set(caps as never[]) }]),
      }),
      pager: new ListPager(new PageTokenCodec(Buffer.alloc(32, 3))),
    });
  const req = parseListRequest({}, ADVISORY_LIST);
  const allowed = service(['advisories.list']);
  t.is((await allowed.list(reader, req)).totalCount, '5');
  t.is((await allowed.get(reader, sha1('DLA-3999-1'))).osvId, 'DLA-3999-1');
  const denied = service(['repo.list', 'groups.list']);
  const none = await denied.list(reader, req);
  t.deepEqual(none.items, []);
  t.is(none.totalCount, '0');
  await t.throwsAsync(denied.get(reader, sha1('DLA-3999-1')), { message: /^Not found/ });
});
