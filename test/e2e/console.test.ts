import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { ADMIN_TOKEN } from '../helpers/server.js';
import { screenshot } from '../helpers/browser.js';
import { consoleTest, namedText } from '../helpers/console-test.js';
import { pick } from '../helpers/picker.js';

/**
 * The web console in a real Chromium against a real Arbor on PGlite: a person signs in
 * with a token, walks the tree, creates a folder, binds a role, sees it in the access
 * inspector and the audit timeline, and is refused what their token may not do, in the
 * API's own words. axe-core checks every view; each view leaves a screenshot.
 */
const c = consoleTest();
const test = c.test;

let org: string;
let bob: string;
let payments: string;

test.before(async () => {
  org = await createGroup(c.w.s.admin, 'acme', undefined, 'The whole company');
  await createGroup(c.w.s.admin, 'platform', org);
  bob = await createIdentity(c.w.s.admin, org, 'bob', { issuer: c.w.issuer.url, subject: 'bob' });
  await createBinding(c.w.s.admin, org, bob, await builtinRoleUid(c.w.s.admin, 'viewer'));
});

test('the server answers / with the console, under its CSP', async (t) => {
  const res = await fetch(`${c.w.s.url}/`, { redirect: 'manual' });
  t.is(res.status, 302);
  t.is(res.headers.get('location'), '/console/');
  const page = await fetch(`${c.w.s.url}/console/`);
  t.is(page.status, 200);
  t.regex(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
});

test('sign in with a token; it is kept in the tab, not in a cookie', async (t) => {
  const page = c.page;
  await page.goto(`${c.w.s.url}/`);
  t.is(new URL(page.url()).pathname, '/console/');
  await page.getByRole('heading', { name: 'Sign in to Arbor' }).waitFor();
  await c.noSeriousAxe(t, 'sign-in');
  await screenshot(page, 'sign-in');
  await c.signInWith(ADMIN_TOKEN);
  await page.getByRole('link', { name: 'acme', exact: true }).waitFor();
  t.deepEqual(await c.b.context.cookies(), []);
  t.is(await page.evaluate('sessionStorage.getItem("arbor.console.token")'), ADMIN_TOKEN);
  await c.noSeriousAxe(t, 'tree (root)');
  t.deepEqual(c.b.incidents, []);
});

test('walk the tree, create a folder, and see a delete refused as the API words it', async (t) => {
  const page = c.page;
  await page.getByRole('link', { name: 'acme', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'acme' }).waitFor();
  await page.getByRole('link', { name: 'platform', exact: true }).waitFor();
  t.regex((await page.locator('.count').first().textContent()) ?? '', /^1 child,/);

  await page.getByLabel('Name', { exact: true }).fill('payments');
  await page.getByLabel('Description', { exact: true }).fill('Money in, money out');
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await page.getByRole('link', { name: 'payments', exact: true }).waitFor();
  t.regex((await page.locator('.count').first().textContent()) ?? '', /^2 children/);
  const created = await c.w.s.admin.get(
    `/iam/v2beta1/groups?uidp.children_of=${org}&name=payments`,
  );
  payments = created.body.groups[0].uid;
  t.truthy(payments);

  await page.getByRole('link', { name: 'payments', exact: true }).click();
  const crumbs = page.getByRole('navigation', { name: 'Breadcrumbs' });
  await crumbs.getByRole('link', { name: 'acme' }).waitFor();
  t.is(await crumbs.locator('[aria-current="page"]').textContent(), 'payments');
  // The rename form is this folder's, not the one just left (it once kept the parent's name,
  // and its Rename and Delete acted on the parent).
  await page.getByRole('button', { name: 'Rename', exact: true }).click();
  t.is(await page.getByLabel('New name').inputValue(), 'payments');
  await c.noSeriousAxe(t, 'tree (folder)');
  await screenshot(page, 'tree');

  // The organization is not empty: the API's refusal, code and reason and message, verbatim.
  await crumbs.getByRole('link', { name: 'acme' }).click();
  await page.getByRole('heading', { level: 1, name: 'acme' }).waitFor();
  await page.getByRole('button', { name: 'Delete organization', exact: true }).click();
  // The confirmation opens with the focus on its confirm button.
  const confirm = page.getByRole('dialog', { name: 'Delete organization acme?' });
  await confirm.waitFor();
  t.regex((await confirm.textContent()) ?? '', /It still has 2 children/);
  t.is(
    await page.evaluate('document.activeElement && document.activeElement.textContent'),
    'Yes, delete',
  );
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  const api = await c.w.s.admin.delete(`/iam/v2beta1/groups/${org}`);
  t.is(api.status, 400);
  t.is(await alert.locator('.code').textContent(), 'FAILED_PRECONDITION');
  t.is(await alert.locator('.reason').textContent(), ' (RESOURCE_NOT_EMPTY)');
  t.is(await alert.locator('.message').textContent(), api.body.message);
  t.deepEqual(c.b.incidents, []);
});

test('bind a role on the group page, then see it in the access view and the audit', async (t) => {
  const page = c.page;
  await page.goto(`${c.w.s.url}/console/#/groups/${encodeURIComponent(payments)}/bindings`);
  await page.getByRole('heading', { level: 1, name: 'payments' }).waitFor();
  const form = page.getByRole('form', { name: 'Bind a role' });
  await pick(page, form, 'Identity', 'bo', 'bob');
  await pick(page, form, 'Role', 'edi', 'editor');
  await form.getByRole('button', { name: 'Bind', exact: true }).click();
  // What it changes is shown first (console-delta.test.ts); nothing is written before this.
  await page
    .getByRole('dialog', { name: 'Bind editor to bob?' })
    .getByRole('button', { name: 'Yes, bind' })
    .click();
  const bindings = page.getByRole('table', { name: 'Role bindings' });
  await bindings.getByRole('cell', { name: 'editor', exact: true }).waitFor();
  t.is(await bindings.getByRole('cell', { name: 'bob', exact: true }).count(), 1);
  const listed = await c.w.s.admin.get(`/iam/v2beta1/roleBindings?uidp.children_of=${payments}`);
  const binding = listed.body.roleBindings[0].uid as string;
  await c.noSeriousAxe(t, 'group (bindings)');
  await screenshot(page, 'group');
  await page
    .getByRole('navigation', { name: 'Group sections' })
    .getByRole('link', { name: 'Registry' })
    .click();
  t.regex(page.url(), /#\/groups\/[^/]+\/registry$/);
  await page.getByLabel('Repo name').fill('web');
  await page.getByRole('button', { name: 'Create repo' }).click();
  await page
    .getByRole('table', { name: 'Repos' })
    .getByRole('cell', { name: 'web', exact: true })
    .waitFor();
  await c.noSeriousAxe(t, 'group (registry)');
  await screenshot(page, 'group-registry');

  await page.goto(`${c.w.s.url}/console/#/access?identity=${encodeURIComponent(bob)}`);
  const what = page.getByRole('table', { name: 'What the identity can do' });
  const row = what.getByRole('row').filter({ hasText: 'payments' });
  await row.waitFor();
  t.regex((await row.textContent()) ?? '', /editor/);
  t.regex((await row.textContent()) ?? '', /repo\.create/);

  const check = page.getByRole('region', { name: 'Check, with the reason' });
  await pick(page, check, 'Identity', 'bo', 'bob');
  await pick(page, check, 'Capability', 'repo.cr', 'repo.create');
  await pick(page, check, 'Group', 'paym', 'payments');
  await check.getByRole('button', { name: 'Check' }).click();
  const proof = check.locator('.check-answer');
  const proven = await namedText(proof);
  t.regex(proven, /Allowed: bob may repo\.create in payments/);
  t.regex(proven, /role editor bound at payments \(here\)/);
  t.false(proven.includes(binding), 'names, not uids');
  await c.noSeriousAxe(t, 'access');
  await screenshot(page, 'access');

  await page.goto(`${c.w.s.url}/console/#/audit?group=${encodeURIComponent(payments)}`);
  const timeline = page.getByRole('list', { name: 'Audit timeline' });
  const entry = timeline
    .getByRole('listitem')
    .filter({ hasText: 'created role binding editor for bob' });
  await entry.waitFor();
  t.regex((await entry.textContent()) ?? '', /via rest/);
  t.is(await entry.getByRole('link', { name: binding }).count(), 0, 'no uid as text');
  // The folder's own creation is on the same timeline as everything below it.
  await timeline.getByRole('listitem').filter({ hasText: 'created group payments' }).waitFor();
  await c.noSeriousAxe(t, 'audit');
  await screenshot(page, 'audit');
  t.deepEqual(c.b.incidents, []);
});

test('the identity builder shows the CRD, curl and CLI, and its claim tester answers', async (t) => {
  const page = c.page;
  await page.goto(`${c.w.s.url}/console/#/builder/${encodeURIComponent(payments)}`);
  await page.getByLabel('Name', { exact: true }).fill('deployer');
  await page.getByLabel('Issuer (exact)').fill(c.w.issuer.url);
  await page.getByLabel('Subject (exact)').fill('repo:acme/payments');
  await page.getByLabel('Other claims, one claim=value a line').fill('ref=refs/heads/main');
  const yaml = (await page.getByLabel('Identity CRD YAML').textContent()) ?? '';
  t.regex(yaml, /kind: Identity/);
  t.true(yaml.includes(`groupUid: "${payments}"`));
  t.true(yaml.includes('"ref": "refs/heads/main"'));
  t.regex((await page.getByLabel('arbor command').textContent()) ?? '', /arbor identities create/);

  const token = await c.w.issuer.mint({
    sub: 'repo:acme/payments',
    aud: 'x',
    ref: 'refs/heads/dev',
  });
  await page.getByLabel('A JWT, or its claims as JSON').fill(token);
  await page.getByRole('button', { name: 'Test' }).click();
  // The claim tester's API is built alongside; until it is served, its refusal is shown.
  const answer = page.locator('.test-results, #tester-h ~ [role="alert"]').first();
  await answer.waitFor();
  const text = (await answer.textContent()) ?? '';
  if (text.includes('would')) {
    t.regex(text, /would not be assumed/);
    t.regex(text, /claims\.ref/);
  } else {
    t.regex(text, /^(NOT_FOUND|UNIMPLEMENTED): /);
    t.log(`claim tester API not served yet: ${text}`);
  }
  await page.getByRole('button', { name: 'Create this identity' }).click();
  await page.getByText('Created deployer').waitFor();
  await c.noSeriousAxe(t, 'identity builder');
  await screenshot(page, 'builder');
});

/** Press Tab until the focused element's accessible text is `text`; fails after `max`. */
async function tabTo(text: string, max = 80): Promise<void> {
  for (let i = 0; i < max; i++) {
    await c.page.keyboard.press('Tab');
    const focused = (await c.page.evaluate(
      '(() => { const e = document.activeElement; return e ? (e.getAttribute("aria-label") || e.textContent || "").trim() : ""; })()',
    )) as string;
    if (focused === text) return;
  }
  throw new Error(`Tab never reached "${text}"`);
}

test('keyboard only: sign in, open a group, create a folder', async (t) => {
  const page = c.page;
  await page.goto(`${c.w.s.url}/console/#/tree`);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to Arbor' }).waitFor();
  await page.locator('body').focus();
  // No login provider is published here: the token field is the first stop.
  await page.keyboard.press('Tab');
  t.is(await page.evaluate('document.activeElement && document.activeElement.name'), 'token');
  await page.keyboard.type(ADMIN_TOKEN);
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.getByRole('navigation', { name: 'Views' }).waitFor();
  await page.getByRole('link', { name: 'acme', exact: true }).waitFor();
  await tabTo('acme');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'acme' }).waitFor();
  // Navigation leaves the focus on the new page's heading, so Tab goes on from there.
  t.is(await page.evaluate('document.activeElement && document.activeElement.tagName'), 'H1');
  await tabTo('payments');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'payments' }).waitFor();
  t.regex(page.url(), /#\/groups\//);
  await page.goBack();
  await page.getByRole('heading', { level: 1, name: 'acme' }).waitFor();
  await page.getByLabel('Name', { exact: true }).focus();
  await page.keyboard.type('by-keyboard');
  await page.keyboard.press('Enter');
  await page.getByRole('link', { name: 'by-keyboard', exact: true }).waitFor();
  t.deepEqual(c.b.incidents, []);
});
