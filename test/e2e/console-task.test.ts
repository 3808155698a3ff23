import { ADMIN_TOKEN } from '../helpers/server.js';
import { screenshot } from '../helpers/browser.js';
import { consoleTest, namedText } from '../helpers/console-test.js';
import { pick, typeName } from '../helpers/picker.js';

/**
 * The console's bar: a person's whole task in Chromium by names alone, never typing or
 * pasting a uid (every text typed goes through typeName, which refuses one): create an
 * organization and a folder, add an identity, bind a role, see who can and what can, check
 * with a reason for a denial, read the audit trail with a filter, delete with confirmation.
 * Binding and deleting show what they change to access before the confirm button.
 * The server starts empty; the test learns no uid but to check the API agrees at the end.
 */
const c = consoleTest();
const test = c.test;

test.before(async () => {});
const nav = (name: string) =>
  c.page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name, exact: true });
const tab = (name: string) =>
  c.page.getByRole('navigation', { name: 'Group sections' }).getByRole('link', { name });

test('a whole task by names alone: org, folder, identity, binding, access, audit, delete', async (t) => {
  const page = c.page;
  // Sign in: the admin token is a secret, not a uid.
  await c.signInWith(ADMIN_TOKEN);

  // An organization, then a folder in it.
  const newOrg = page.getByRole('region', { name: 'New organization' });
  await typeName(newOrg.getByLabel('Name', { exact: true }), 'globex');
  await newOrg.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('heading', { level: 1, name: 'globex' }).waitFor();
  const newFolder = page.getByRole('region', { name: 'New folder' });
  await typeName(newFolder.getByLabel('Name', { exact: true }), 'payments');
  await newFolder.getByRole('button', { name: 'Create' }).click();
  await page.getByRole('link', { name: 'payments', exact: true }).first().click();
  await page.getByRole('heading', { level: 1, name: 'payments' }).waitFor();

  // An identity, through the identity builder, which knows its group by name.
  await tab('Identities').click();
  await page.getByRole('link', { name: 'New identity' }).click();
  await page.getByRole('heading', { level: 1, name: 'Identity builder' }).waitFor();
  const group = page.getByRole('combobox', { name: 'Group', exact: true });
  for (let i = 0; i < 100 && (await group.inputValue()) !== 'payments'; i++)
    await page.waitForTimeout(50);
  t.is(await group.inputValue(), 'payments');
  await typeName(page.getByLabel('Name', { exact: true }), 'dana');
  await typeName(page.getByLabel('Issuer (exact)'), c.w.issuer.url);
  await typeName(page.getByLabel('Subject (exact)'), 'dana@globex');
  await page.getByRole('button', { name: 'Create this identity' }).click();
  await page.getByText('Created dana').waitFor();

  // Bind viewer to dana at payments, on the group page.
  await page.getByRole('link', { name: 'see it in its group' }).click();
  await page.getByRole('heading', { level: 1, name: 'payments' }).waitFor();
  await tab('Role bindings').click();
  const bind = page.getByRole('form', { name: 'Bind a role' });
  await pick(page, bind, 'Identity', 'da', 'dana');
  await pick(page, bind, 'Role', 'vie', 'viewer');
  await bind.getByRole('button', { name: 'Bind', exact: true }).click();
  // Before anything is written, what it changes, by name.
  const review = page.getByRole('dialog', { name: 'Bind viewer to dana?' });
  const gains = review
    .getByRole('region', { name: 'What this changes' })
    .locator('.delta-lines li');
  await gains.getByText(/^1 identity gains \d+ capabilities in globex\/payments: dana$/).waitFor();
  t.true((await gains.locator('.delta-caps code').allTextContents()).includes('groups.list'));
  await review.getByRole('button', { name: 'Yes, bind' }).click();
  await review.waitFor({ state: 'detached' });
  await page
    .getByRole('table', { name: 'Role bindings' })
    .getByRole('cell', { name: 'dana', exact: true })
    .waitFor();

  // What can dana do? Who can list groups at payments? By name, answered by name.
  await nav('Access').click();
  await page.getByRole('heading', { level: 1, name: 'Access' }).waitFor();
  const whatCan = page.getByRole('region', { name: 'What can an identity do?' });
  await pick(page, whatCan, 'Identity', 'da', 'dana');
  const row = page
    .getByRole('table', { name: 'What the identity can do' })
    .getByRole('row')
    .filter({ hasText: 'payments' });
  await row.waitFor();
  t.regex((await row.textContent()) ?? '', /viewer/);
  t.regex((await row.textContent()) ?? '', /groups\.list/);
  const whoCan = page.getByRole('region', { name: 'Who can do this here?' });
  await pick(page, whoCan, 'Group', 'paym', 'payments');
  // A typo in a capability is answered with the nearest one.
  const cap = whoCan.getByRole('combobox', { name: 'Capability', exact: true });
  await cap.click();
  await typeName(cap, 'grups.list');
  await whoCan.getByText('Did you mean').waitFor();
  await whoCan.getByRole('button', { name: 'groups.list' }).click();
  const holders = page.getByRole('list', { name: 'Who can' });
  await holders.getByRole('link', { name: 'dana' }).waitFor();
  t.regex((await holders.textContent()) ?? '', /viewer at payments/);

  // Check: may dana delete payments? No, and why.
  const check = page.getByRole('region', { name: 'Check, with the reason' });
  await pick(page, check, 'Identity', 'dan', 'dana');
  await pick(page, check, 'Capability', 'groups.del', 'groups.delete');
  await pick(page, check, 'Group', 'pay', 'payments');
  await check.getByRole('button', { name: 'Check' }).click();
  const answer = check.locator('.check-answer');
  const why = await namedText(answer);
  t.regex(why, /Denied: dana may not groups\.delete in payments/);
  t.regex(why, /role viewer at payments \(here\) grants .*groups\.list.*; it lacks groups\.delete/);
  await c.noSeriousAxe(t, 'access (denied, with the reason)');
  await screenshot(page, 'task-access-denied');

  // The audit trail of globex and everything below it, only the creations.
  await nav('Audit').click();
  await page.getByRole('heading', { level: 1, name: 'Audit' }).waitFor();
  await pick(page, page, 'Group (and everything below)', 'glo', 'globex');
  await page.getByLabel('Operation').selectOption('create');
  const timeline = page.getByRole('list', { name: 'Audit timeline' });
  await timeline.getByRole('listitem').filter({ hasText: 'created identity dana' }).waitFor();
  const entries = await timeline.locator(':scope > li').allTextContents();
  t.true(
    entries.some((e) => /created group globex/.test(e)),
    'the group itself is in',
  );
  t.true(
    entries.some((e) => /created group payments/.test(e)),
    'and what is below it',
  );
  t.true(entries.some((e) => /created role binding/.test(e)));
  t.true(
    entries.every((e) => /created/.test(e)),
    'only creations',
  );
  t.true(entries.every((e) => /the admin token/.test(e)));
  t.regex(entries[0] ?? '', /ago|now/);
  const dana = timeline.locator(':scope > li').filter({ hasText: 'created identity dana' });
  await dana.getByText('Details').click();
  const diff = dana.getByRole('table', { name: 'Before and after' });
  t.regex(
    (await diff.getByRole('row').filter({ hasText: 'claimMatch' }).textContent()) ?? '',
    /dana@globex/,
  );
  await page.getByLabel('Operation').selectOption('delete');
  await page.getByText('0 changes you can see match these filters.').waitFor();
  await c.noSeriousAxe(t, 'audit (filtered)');
  await screenshot(page, 'task-audit');

  // Delete dana (with its binding), then the folder: each asks first.
  await page.getByRole('link', { name: 'globex' }).first().click();
  await page.getByRole('heading', { level: 1, name: 'globex' }).waitFor();
  await page.getByRole('link', { name: 'payments', exact: true }).first().click();
  await page.getByRole('heading', { level: 1, name: 'payments' }).waitFor();
  await tab('Identities').click();
  await page.getByRole('button', { name: 'Delete identity dana' }).click();
  const askId = page.getByRole('dialog', { name: 'Delete identity dana?' });
  t.regex((await askId.textContent()) ?? '', /its 1 role binding/);
  await askId.getByText(/^1 identity loses \d+ capabilities in globex\/payments: dana$/).waitFor();
  await askId.getByRole('button', { name: 'Yes, delete' }).click();
  await askId.waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Delete folder' }).click();
  const askFolder = page.getByRole('dialog', { name: 'Delete folder payments?' });
  await askFolder.getByRole('button', { name: 'Yes, delete' }).click();
  await page.getByRole('heading', { level: 1, name: 'globex' }).waitFor();

  // The API agrees: globex is left, empty.
  const orgs = await c.w.s.admin.get('/iam/v2beta1/groups?name=globex');
  t.is(orgs.body.groups.length, 1);
  const below = await c.w.s.admin.get(
    `/iam/v2beta1/groups?uidp.descendants_of=${orgs.body.groups[0].uid}`,
  );
  t.is(below.body.totalCount, '0');
  const ids = await c.w.s.admin.get('/iam/v2beta1/identities?name=dana');
  t.is(ids.body.totalCount, '0');
  t.deepEqual(c.b.incidents, []);
});
