import { createGroup } from '../helpers/fixtures.js';
import { createIdentity } from '../helpers/iam-fixtures.js';
import { ADMIN_TOKEN } from '../helpers/server.js';
import { screenshot } from '../helpers/browser.js';
import { consoleTest, namedText } from '../helpers/console-test.js';
import { pick } from '../helpers/picker.js';

/**
 * A binding's window in the console, in a real Chromium against a real Arbor: a person
 * sets a start and an expiry in local time when binding a role, the API gets the instants,
 * and the binding table says "starts in 2 hours", never a live-looking row; a binding
 * that has started says when it expires, in words, with the local times in its title.
 */
const c = consoleTest();
const test = c.test;
const H = 3_600_000;

let org: string;
let ada: string;

test.before(async () => {
  org = await createGroup(c.w.s.admin, 'windows');
  ada = await createIdentity(c.w.s.admin, org, 'ada', { issuer: c.w.issuer.url, subject: 'ada' });
});

/** `ms` as a `datetime-local` value in the browser's own time zone (what a person types). */
const localInput = async (ms: number): Promise<string> =>
  (await c.page.evaluate(`(() => {
    const d = new Date(${ms});
    const p = (n) => String(n).padStart(2, '0');
    return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + 'T' +
      p(d.getHours()) + ':' + p(d.getMinutes());
  })()`)) as string;

test('bind a role with a start and an expiry: the table says it starts in 2 hours', async (t) => {
  const page = c.page;
  await c.signInWith(ADMIN_TOKEN);
  await page.goto(c.groupUrl(org, 'bindings'));
  await page.getByRole('heading', { level: 1, name: 'windows' }).waitFor();
  const form = page.getByRole('form', { name: 'Bind a role' });
  await pick(page, form, 'Identity', 'ad', 'ada');
  await pick(page, form, 'Role', 'view', 'viewer');
  // Whole minutes (what the picker takes), a little over two hours off, for ten hours.
  const start = Math.ceil((Date.now() + 2 * H) / 60_000) * 60_000 + 60_000;
  const end = start + 10 * H;
  await form.getByLabel('Starts (optional)').fill(await localInput(start));
  await form.getByLabel('Expires (optional)').fill(await localInput(end));
  await form.getByRole('button', { name: 'Bind', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Bind viewer to ada?' });
  await dialog.getByText('Until it starts it grants nothing.').waitFor();
  await dialog.getByRole('button', { name: 'Yes, bind' }).click();
  await dialog.waitFor({ state: 'detached' });

  // The API has the instants the person meant in local time.
  const made = await c.w.s.admin.get(
    `/iam/v2beta1/roleBindings?identity=${encodeURIComponent(ada)}`,
  );
  t.is(made.body.totalCount, '1');
  const b = made.body.roleBindings[0] as { uid: string; notBefore: string; expireTime: string };
  t.is(Date.parse(b.notBefore), start);
  t.is(Date.parse(b.expireTime), end);

  const row = page
    .getByRole('table', { name: 'Role bindings' })
    .getByRole('row')
    .filter({ hasText: 'ada' });
  await row.getByText('starts in 2 hours').waitFor();
  const cell = row.locator('time');
  t.is(await cell.getAttribute('datetime'), b.notBefore);
  // The title gives both ends in local time, as the browser writes them, never raw UTC.
  const title = (await cell.getAttribute('title')) ?? '';
  const local = (await page.evaluate(
    `[${JSON.stringify(b.notBefore)}, ${JSON.stringify(b.expireTime)}].map((x) => new Date(x).toLocaleString())`,
  )) as string[];
  t.is(title, `from ${local[0]} until ${local[1]}`);
  t.false(title.includes('Z'), title);
  await c.noSeriousAxe(t, 'bindings with a window');
  await screenshot(page, 'binding-window');

  // The access check says it is not yet, and when it starts (the answer's `pending`).
  await page
    .getByRole('navigation', { name: 'Views' })
    .getByRole('link', { name: 'Access', exact: true })
    .click();
  await page.getByRole('heading', { level: 1, name: 'Access' }).waitFor();
  const check = page.getByRole('region', { name: 'Check, with the reason' });
  await pick(page, check, 'Identity', 'ad', 'ada');
  await pick(page, check, 'Capability', 'groups.li', 'groups.list');
  await pick(page, check, 'Group', 'wind', 'windows');
  await check.getByRole('button', { name: 'Check' }).click();
  const answer = check.locator('.check-answer');
  const why = await namedText(answer);
  t.regex(why, /Denied: ada may not groups\.list in windows/);
  t.regex(why, /Not yet: a binding that grants it has not started\./);
  t.regex(why, /role viewer at windows \(here\) starts in 2 hours/);
  await c.noSeriousAxe(t, 'access (not started yet)');
  t.deepEqual(c.b.incidents, []);
});

test('a started binding with an expiry says when it expires, in words', async (t) => {
  const page = c.page;
  const res = await c.w.s.admin.post(`/iam/v2beta1/roleBindings/${org}`, {
    identityUid: ada,
    roleUid: (
      (await c.w.s.admin.get('/iam/v2beta1/roles?name=editor')).body.roles[0] as { uid: string }
    ).uid,
    expireTime: new Date(Date.now() + 3 * 24 * H + 60_000).toISOString(),
  });
  t.is(res.status, 200);
  // Made behind the page's back: read afresh.
  await page.goto(c.groupUrl(org, 'bindings'));
  await page.reload();
  const row = page
    .getByRole('table', { name: 'Role bindings' })
    .getByRole('row')
    .filter({ hasText: 'editor' });
  await row.first().waitFor();
  t.regex((await row.first().textContent()) ?? '', /expires in 3 days/);
});
