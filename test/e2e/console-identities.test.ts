import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { ADMIN_TOKEN } from '../helpers/server.js';
import { consoleTest } from '../helpers/console-test.js';

/**
 * The console's identity pages: the organization's identities with a search by name or
 * path (bounded, paged List calls), one page per identity (its bindings, last sign-in, its
 * audit trail only for a caller who may read it), the roles page, no Audit link for a
 * caller who may not read the audit, and a word for a stale or expired sign-in link.
 */
const c = consoleTest();
const test = c.test;

let org: string;
let payments: string;
let ledger: string;
let ci: string;
let bobToken: string;
let auditorToken: string;
/** The paths and queries of the API calls the page made (`/iam/...?...`). */
const calls: string[] = [];

test.before(async () => {
  const admin = c.w.s.admin;
  org = await createGroup(admin, 'platform');
  payments = await createGroup(admin, 'payments', org);
  ledger = await createGroup(admin, 'ledger', payments);
  const viewer = await builtinRoleUid(admin, 'viewer');
  const owner = await builtinRoleUid(admin, 'owner');
  const deployer = await createRole(admin, payments, 'deployer', ['repo.create', 'tag.list']);
  ci = await createIdentity(admin, payments, 'ci-deployer');
  await createBinding(admin, payments, ci, viewer);
  await createBinding(admin, ledger, ci, deployer);
  await createIdentity(admin, ledger, 'carol');
  // 52 more in ledger: the list is paged (50 a page), never fetched whole.
  for (let i = 0; i < 52; i++)
    await createIdentity(admin, ledger, `svc-${String(i).padStart(2, '0')}`);
  const bob = await createIdentity(admin, org, 'bob', { issuer: c.w.issuer.url, subject: 'bob' });
  await createBinding(admin, org, bob, viewer);
  bobToken = await c.w.tokenFor(bob, 'bob');
  // bob signed in two days ago (the exchange's own touch may be flushed later, as now).
  const day = 24 * 3600 * 1000;
  await c.w.s.db
    .knex('identities')
    .where('uid', bob)
    .update({
      created_at: new Date(Date.now() - 3 * day),
      last_seen_at: new Date(Date.now() - 2 * day),
    });
  const auditor = await createIdentity(admin, org, 'auditor', {
    issuer: c.w.issuer.url,
    subject: 'auditor',
  });
  await createBinding(admin, payments, auditor, owner);
  auditorToken = await c.w.tokenFor(auditor, 'auditor');
  c.page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith('/iam/') || u.pathname.startsWith('/audit/'))
      calls.push(`${u.pathname}${u.search}`);
  });
});

/** Polled from here: the console's CSP (no unsafe-eval) refuses waitForFunction's polling. */
async function until(expression: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await c.page.evaluate(expression)) return;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error(`never true: ${expression}`);
}

const settled = () =>
  until(`!document.querySelector('[aria-busy="true"]') &&
    ![...document.querySelectorAll('[role="status"]')].some((e) => e.textContent === 'Loading…')`);

/** The first cells of a table's rows (a table named by its heading). */
async function column(name: string): Promise<string[]> {
  return c.page
    .getByRole('table', { name })
    .locator('tbody tr > :first-child')
    .evaluateAll((cells) =>
      cells.map((e) => (e.querySelector('.role-name') ?? e).textContent ?? ''),
    );
}

/** The roles page's row of the role named `name`. */
const roleRow = (name: string) =>
  c.page
    .locator('table.roles tbody tr')
    .filter({ has: c.page.locator('.role-name', { hasText: new RegExp(`^${name}$`) }) });

/** Every link in the page now that leads to the audit view. */
const auditLinks = () =>
  c.page.evaluate(
    `[...document.querySelectorAll('a[href^="#/audit"]')].map((a) => a.textContent + ' ' + a.getAttribute('href'))`,
  ) as Promise<string[]>;

test('the identity list: every identity of the organization, paged, searched by name or path', async (t) => {
  const page = c.page;
  await c.signInWith(ADMIN_TOKEN);
  calls.length = 0;
  await page
    .getByRole('navigation', { name: 'Views' })
    .getByRole('link', { name: 'Identities' })
    .click();
  await page.getByRole('heading', { level: 1, name: 'Identities' }).waitFor();
  await page.getByRole('table', { name: 'All identities' }).waitFor();
  await settled();
  t.regex((await page.locator('#identity-list-h ~ p.count').textContent()) ?? '', /^56 identities/);
  const first = await column('All identities');
  t.is(first.length, 50, 'one page of 50');
  t.deepEqual(first.slice(0, 4), ['auditor', 'bob', 'carol', 'ci-deployer']);
  // Every List call of the identities is one bounded page of the organization.
  const lists = calls.filter((x) => x.startsWith('/iam/v2beta1/identities?'));
  t.true(lists.length >= 1);
  for (const l of lists) {
    t.regex(l, /page_size=50/);
    t.regex(l, new RegExp(`uidp.descendants_of=${org}`));
  }
  await page.getByRole('button', { name: 'More' }).click();
  await until(`document.querySelector('tbody tr > :first-child')?.textContent === 'svc-46'`);
  t.deepEqual(await column('All identities'), [
    'svc-46',
    'svc-47',
    'svc-48',
    'svc-49',
    'svc-50',
    'svc-51',
  ]);
  t.regex(
    calls.filter((x) => x.startsWith('/iam/v2beta1/identities?')).at(-1) ?? '',
    /page_token=/,
  );

  // By name: a prefix anywhere in the organization.
  await page.getByLabel('Name or path (folder/name)').fill('ci');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('table', { name: 'Identities matching “ci”' }).waitFor();
  await settled();
  t.deepEqual(await column('Identities matching “ci”'), ['ci-deployer']);
  // The group column names where it hangs, by path.
  t.is(
    (await page.locator('tbody tr td .group-path').first().textContent())?.trim(),
    'platform / payments',
  );
  // By path: the folders below the organization, then a prefix in them and below.
  await page.getByLabel('Name or path (folder/name)').fill('payments/ledger/ca');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('table', { name: 'Identities matching “payments/ledger/ca”' }).waitFor();
  await settled();
  t.deepEqual(await column('Identities matching “payments/ledger/ca”'), ['carol']);
  await page.getByLabel('Name or path (folder/name)').fill('payments/c');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('table', { name: 'Identities matching “payments/c”' }).waitFor();
  await settled();
  t.deepEqual(await column('Identities matching “payments/c”'), ['carol', 'ci-deployer']);
  // A path that names no group says so, as the API words it.
  await page.getByLabel('Name or path (folder/name)').fill('nowhere/x');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('alert').filter({ hasText: 'NOT_FOUND' }).waitFor();
  t.deepEqual(c.b.incidents, []);
});

test('an identity page: its bindings at every group, last sign-in, its audit trail', async (t) => {
  const page = c.page;
  await c.signInWith(ADMIN_TOKEN);
  // Reached from where the identity is named: the group's bindings.
  await page.goto(c.groupUrl(payments, 'bindings'));
  await page
    .getByRole('table', { name: 'Role bindings' })
    .getByRole('link', { name: 'ci-deployer', exact: true })
    .click();
  await page.getByRole('heading', { level: 1, name: 'ci-deployer' }).waitFor();
  t.true(page.url().endsWith(`#/identity/${encodeURIComponent(ci)}`));
  await page.getByRole('table', { name: 'Role bindings' }).waitFor();
  await settled();
  // Role and group by names, one row per binding (its window as the binding tables say it).
  const rows = await page
    .getByRole('table', { name: 'Role bindings' })
    .locator('tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 2).map((td) => td.textContent)),
    );
  t.deepEqual(rows.sort(), [
    ['deployer', 'platform / payments / ledger'],
    ['viewer', 'platform / payments'],
  ]);
  t.is((await page.locator('.last-seen').textContent())?.trim(), 'never');
  // The admin token may read the audit: the trail of ci-deployer's changes is here.
  const trail = page.getByRole('region', { name: 'Audit trail' });
  await trail.getByRole('list', { name: 'Audit timeline' }).waitFor();
  await settled();
  t.regex((await trail.locator('p.count').textContent()) ?? '', /^1 change/);
  t.is(await trail.getByRole('link', { name: 'What ci-deployer changed' }).count(), 1);
  // The identities tab names it with a link too; bob, who signed in, has a last sign-in.
  await page.goto(c.groupUrl(org, 'identities'));
  await page
    .getByRole('table', { name: 'Identities' })
    .getByRole('link', { name: 'bob', exact: true })
    .click();
  await page.getByRole('heading', { level: 1, name: 'bob' }).waitFor();
  await settled();
  // Two days ago as set above, or now if the exchange's own touch was flushed since.
  t.regex(
    (await page.locator('.last-seen').textContent()) ?? '',
    /\((2 days ago|now|\d+ seconds? ago)\)$/,
  );
  t.regex((await page.locator('.last-seen time').getAttribute('datetime')) ?? '', /^\d{4}-/);
  t.deepEqual(c.b.incidents, []);
});

test('the roles page: built-in and custom roles with their capabilities', async (t) => {
  const page = c.page;
  await c.signInWith(bobToken);
  await page
    .getByRole('navigation', { name: 'Views' })
    .getByRole('link', { name: 'Roles' })
    .click();
  await page.getByRole('table', { name: 'Roles' }).waitFor();
  await settled();
  const names = await column('Roles');
  for (const n of ['viewer', 'editor', 'owner', 'deployer']) t.true(names.includes(n), n);
  const viewer = roleRow('viewer');
  t.is((await viewer.locator('.role-kind').textContent())?.trim(), 'built-in');
  t.true(
    (
      await viewer
        .getByRole('list', { name: 'Capabilities of viewer' })
        .locator('li')
        .allTextContents()
    ).includes('groups.list'),
  );
  const deployer = roleRow('deployer');
  t.is(
    (await deployer.locator('.role-kind').textContent())?.trim(),
    'custom, defined by platform / payments',
  );
  t.deepEqual(
    await deployer
      .getByRole('list', { name: 'Capabilities of deployer' })
      .locator('li')
      .allTextContents(),
    ['repo.create', 'tag.list'],
  );
  await page.getByLabel('Name starts with').fill('dep');
  await page.getByRole('button', { name: 'Search' }).click();
  await until(`document.querySelectorAll('table.roles tbody tr').length === 1`);
  t.deepEqual(await column('Roles'), ['deployer']);
  t.deepEqual(c.b.incidents, []);
});

test('a viewer, who may not read the audit, is offered no Audit link anywhere; an owner is', async (t) => {
  const page = c.page;
  await c.signInWith(bobToken);
  const nav = page.getByRole('navigation', { name: 'Views' });
  await nav.getByRole('link', { name: 'Roles' }).waitFor();
  await settled();
  t.is(await nav.getByRole('link', { name: 'Audit' }).count(), 0, 'no Audit in the nav');
  for (const tab of ['identities', 'bindings', 'audit']) {
    await page.goto(c.groupUrl(payments, tab));
    await page.locator('.tab-panel h2').first().waitFor();
    await settled();
    t.deepEqual(await auditLinks(), [], `${tab} of payments`);
  }
  t.is(await page.getByText('You cannot read the audit trail here.').count(), 1);
  await page.goto(`${c.w.s.url}/console/#/identity/${encodeURIComponent(ci)}`);
  await page.getByRole('heading', { level: 1, name: 'ci-deployer' }).waitFor();
  await page.getByRole('table', { name: 'Role bindings' }).waitFor();
  await settled();
  t.deepEqual(await auditLinks(), [], 'the identity page');
  t.is(await page.getByRole('region', { name: 'Audit trail' }).count(), 0);
  await page.goto(`${c.w.s.url}/console/#/access?identity=${encodeURIComponent(ci)}`);
  await page.getByRole('link', { name: 'The identity’s page' }).waitFor();
  await settled();
  t.deepEqual(await auditLinks(), [], 'the access view');

  // An owner at payments may read the audit there: the links are offered.
  await c.signInWith(auditorToken);
  await nav.getByRole('link', { name: 'Audit' }).waitFor();
  await page.goto(c.groupUrl(payments, 'identities'));
  await page.getByRole('link', { name: 'Audit of ci-deployer' }).waitFor();
  await page.goto(`${c.w.s.url}/console/#/identity/${encodeURIComponent(ci)}`);
  await page
    .getByRole('region', { name: 'Audit trail' })
    .getByRole('list', { name: 'Audit timeline' })
    .waitFor();
  t.deepEqual(c.b.incidents, []);
});

/** Open a sign-in link as a fresh load of the console (not a hash change in a loaded one). */
async function openLink(token: string): Promise<void> {
  await c.page.goto('about:blank');
  await c.page.goto(`${c.w.s.url}/console/#token=${encodeURIComponent(token)}`);
}

/** A JWT-shaped token with these claims and no valid signature. */
function fakeJwt(claims: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'ES256', typ: 'JWT' })}.${part(claims)}.${Buffer.from('x').toString('base64url')}`;
}

test('a stale or expired sign-in link says so on the sign-in page; a good one signs in', async (t) => {
  const page = c.page;
  await c.signInWith(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign out' }).click();
  const notice = page.locator('.sign-in .notice');
  // Expired: known from the token's own exp, before anything is asked of the server.
  calls.length = 0;
  const expired = fakeJwt({ sub: ci, exp: Math.floor(Date.now() / 1000) - 60 });
  await openLink(expired);
  await page.getByRole('heading', { name: 'Sign in to Arbor' }).waitFor();
  t.regex((await notice.textContent()) ?? '', /^The sign-in link has expired\./);
  t.is(await notice.getAttribute('role'), 'alert');
  t.false(page.url().includes('token='), 'the token left the address bar');
  t.deepEqual(calls, [], 'nothing asked with an expired token');
  // Stale: not expired by its own word, but the server does not accept it (another run's
  // key, a cut-short link).
  for (const stale of [
    fakeJwt({ sub: ci, exp: Math.floor(Date.now() / 1000) + 3600 }),
    'not-a-token',
    bobToken.slice(0, 40),
  ]) {
    await openLink(stale);
    await page.getByRole('heading', { name: 'Sign in to Arbor' }).waitFor();
    await notice.waitFor();
    t.regex((await notice.textContent()) ?? '', /^The sign-in link is not valid/, stale);
    t.false(page.url().includes('token='));
  }
  // An empty link too.
  await openLink('');
  await notice.waitFor();
  t.regex((await notice.textContent()) ?? '', /^The sign-in link is not valid/);
  // A good link signs in, and the notice is gone.
  await openLink(bobToken);
  await page.locator('.who strong').filter({ hasText: 'bob' }).waitFor();
  t.is(await notice.count(), 0);
  // A first visit, signed out, has no notice at all.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to Arbor' }).waitFor();
  t.is(await notice.count(), 0);
  t.deepEqual(
    c.b.incidents.filter((x) => !/status of 401/.test(x)),
    [],
  );
});
