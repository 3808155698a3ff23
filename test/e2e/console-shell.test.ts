import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { ADMIN_TOKEN } from '../helpers/server.js';
import { axeSerious, screenshot } from '../helpers/browser.js';
import { consoleTest } from '../helpers/console-test.js';

/**
 * The console's shell: the tree of organizations, one group page with a tab per
 * address, deletes that ask first and name what goes with them, only the actions the
 * caller may take (one batch check per page), sign-in, titles and focus; axe on every view
 * at 1280 and 420 px, with a screenshot of each in artifacts/console/.
 */
const c = consoleTest();
const test = c.test;

let org: string;
let team: string;
let bobToken: string;
let carol: string;
/** Every response of 400 or more the page saw (a favicon 404 would land here). */
const failures: string[] = [];

const TABS = [
  'children',
  'identities',
  'bindings',
  'registry',
  'providers',
  'invites',
  'events',
  'audit',
];

test.before(async () => {
  org = await createGroup(c.w.s.admin, 'acme', undefined, 'The whole company');
  team = await createGroup(c.w.s.admin, 'team', org);
  const deep = await createGroup(c.w.s.admin, 'deep', team);
  const bob = await createIdentity(c.w.s.admin, org, 'bob', {
    issuer: c.w.issuer.url,
    subject: 'bob',
  });
  await createBinding(c.w.s.admin, org, bob, await builtinRoleUid(c.w.s.admin, 'viewer'));
  bobToken = await c.w.tokenFor(bob, 'bob');
  carol = await createIdentity(c.w.s.admin, team, 'carol', {
    issuer: c.w.issuer.url,
    subject: 'c',
  });
  await createBinding(c.w.s.admin, team, carol, await builtinRoleUid(c.w.s.admin, 'viewer'));
  await createBinding(c.w.s.admin, team, carol, await builtinRoleUid(c.w.s.admin, 'editor'));
  // In team/deep, so that team's own lists keep the counts asserted below.
  // idle: bound at deep 200 days ago and never used, a finding of the unused-access view.
  const idle = await createIdentity(c.w.s.admin, deep, 'idle');
  const idleBinding = await createBinding(
    c.w.s.admin,
    deep,
    idle,
    await builtinRoleUid(c.w.s.admin, 'viewer'),
  );
  const longAgo = new Date(Date.now() - 200 * 24 * 3600 * 1000);
  await c.w.s.db.knex('role_bindings').where('uid', idleBinding).update({ created_at: longAgo });
  await c.w.s.db
    .knex('identities')
    .where('uid', idle)
    .update({ created_at: longAgo, last_seen_at: longAgo });
  // erin asks for editor at deep: a pending request in the approvers' inbox.
  const erin = await createIdentity(c.w.s.admin, deep, 'erin', {
    issuer: c.w.issuer.url,
    subject: 'erin',
  });
  await createBinding(c.w.s.admin, deep, erin, await builtinRoleUid(c.w.s.admin, 'viewer'));
  const asked = await c.w.s
    .client(await c.w.tokenFor(erin, 'erin'))
    .post(`/iam/v2beta1/accessRequests/${deep}`, {
      roleUid: await builtinRoleUid(c.w.s.admin, 'editor'),
      durationSeconds: 3600,
      reason: 'release week',
    });
  if (asked.status !== 200) throw new Error(`request: ${JSON.stringify(asked.body)}`);
  const sub = await c.w.s.admin.post(`/events/v2beta1/subscriptions/${team}`, {
    name: 'siem',
    sink: 'https://siem.example.com/arbor',
  });
  if (sub.status !== 200) throw new Error(`subscription: ${JSON.stringify(sub.body)}`);
  c.page.on('response', (r) => {
    if (r.status() >= 400) failures.push(`${r.status()} ${new URL(r.url()).pathname}`);
  });
});

test('sign-in: no provider button when none is published, a token hint, a favicon', async (t) => {
  const page = c.page;
  await page.goto(`${c.w.s.url}/console/`);
  await page.getByRole('heading', { name: 'Sign in to Arbor' }).waitFor();
  t.is(await page.getByRole('button', { name: 'Sign in with the login provider' }).count(), 0);
  t.regex((await page.locator('#token-hint').textContent()) ?? '', /npm start.*#token=/);
  t.is(await page.title(), 'Sign in · Arbor console');
  const icon = await page.locator('link[rel="icon"]').getAttribute('href');
  t.regex(icon ?? '', /^data:image\/svg\+xml;base64,/);
  t.deepEqual(failures, [], 'no 404 (no /favicon.ico asked for)');
});

test('the header says who is signed in: the admin token, or the identity by name', async (t) => {
  const page = c.page;
  await c.signInWith(ADMIN_TOKEN);
  t.is(
    (await page.locator('.who').textContent())?.trim(),
    'Signed in with the admin token Sign out',
  );
  await c.signInWith(bobToken);
  await page.locator('.who strong').filter({ hasText: 'bob' }).waitFor();
  t.regex((await page.locator('.who').textContent()) ?? '', /^Signed in as bob/);
});

test('the tree: organizations with their folders, expandable, nav and title following', async (t) => {
  const page = c.page;
  await c.signInWith(ADMIN_TOKEN);
  await page.goto(`${c.w.s.url}/console/#/tree`);
  const tree = page.getByRole('list', { name: 'Organizations' });
  await tree.getByRole('link', { name: 'acme', exact: true }).waitFor();
  // Only organizations at the top: the folders are inside them.
  t.is(await tree.getByRole('link', { name: 'team', exact: true }).count(), 0);
  const expand = page.getByRole('button', { name: 'Folders in acme' });
  t.is(await expand.getAttribute('aria-expanded'), 'false');
  await expand.click();
  t.is(await expand.getAttribute('aria-expanded'), 'true');
  const inAcme = page.getByRole('list', { name: 'Folders in acme' });
  await inAcme.getByRole('link', { name: 'team', exact: true }).waitFor();
  t.regex((await page.locator('.branch .count').first().textContent()) ?? '', /^1 child$/);
  await page.getByRole('button', { name: 'Folders in team' }).click();
  await page
    .getByRole('list', { name: 'Folders in team' })
    .getByRole('link', { name: 'deep' })
    .waitFor();
  t.is(await page.title(), 'Tree · Arbor console');
  t.is(await page.locator('nav[aria-label="Views"] [aria-current="page"]').textContent(), 'Tree');

  await inAcme.getByRole('link', { name: 'team', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'team' }).waitFor();
  // The group page is part of the tree: the nav item stays, the title names the group.
  t.is(await page.locator('nav[aria-label="Views"] [aria-current="page"]').textContent(), 'Tree');
  await until(`document.title === 'team · Children · Arbor console'`);
  t.is(await page.evaluate('document.activeElement && document.activeElement.tagName'), 'H1');
  const crumbs = page.getByRole('navigation', { name: 'Breadcrumbs' });
  t.is(await crumbs.getByRole('link', { name: 'acme' }).count(), 1);
  t.is(await crumbs.locator('[aria-current="page"]').textContent(), 'team');
});

test('a group page: a tab per address, the heading never a raw uid', async (t) => {
  const page = c.page;
  // Slow the group's own read down so the loading heading can be seen.
  await page.route(`**/iam/v2beta1/groups/${team}`, async (r) => {
    await new Promise((ok) => setTimeout(ok, 300));
    await r.continue();
  });
  await page.goto(c.groupUrl(team, 'identities'));
  const h1 = page.getByRole('heading', { level: 1 });
  await h1.waitFor();
  t.false(((await h1.textContent()) ?? '').includes(team), 'no uid in the heading');
  await page.getByRole('heading', { level: 1, name: 'team' }).waitFor();
  await page.unroute(`**/iam/v2beta1/groups/${team}`);
  const tabs = page.getByRole('navigation', { name: 'Group sections' });
  t.is(await tabs.locator('[aria-current="page"]').textContent(), 'Identities');
  await tabs.getByRole('link', { name: 'Role bindings' }).click();
  t.true(page.url().endsWith(`/groups/${encodeURIComponent(team)}/bindings`));
  await page.getByRole('table', { name: 'Role bindings' }).waitFor();
  t.regex((await page.locator('#bindings-h ~ p.count').textContent()) ?? '', /^2 role bindings/);
  await page.goBack();
  await page.getByRole('table', { name: 'Identities' }).waitFor();
  t.regex(
    (await page.locator('#identities-h ~ p.count').textContent()) ?? '',
    /^1 identity in all/,
  );
});

test('delete asks first, names what goes with it, and the bindings go too', async (t) => {
  const page = c.page;
  await page.goto(c.groupUrl(team, 'identities'));
  const row = page.getByRole('table', { name: 'Identities' }).getByRole('row').filter({
    hasText: 'carol',
  });
  await row.getByRole('button', { name: 'Delete identity carol' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete identity carol?' });
  await dialog.waitFor();
  t.regex((await dialog.textContent()) ?? '', /identity carol and its 2 role bindings\./);
  t.is(
    await page.evaluate('document.activeElement && document.activeElement.textContent'),
    'Yes, delete',
  );
  // Escape keeps it.
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  t.is((await c.w.s.admin.get(`/iam/v2beta1/identities/${carol}`)).status, 200);

  await row.getByRole('button', { name: 'Delete identity carol' }).click();
  await dialog.getByRole('button', { name: 'Yes, delete' }).click();
  await row.waitFor({ state: 'detached' });
  t.is((await c.w.s.admin.get(`/iam/v2beta1/identities/${carol}`)).status, 404);
  // The focus is on the list's heading, not lost on <body>.
  t.is(await page.evaluate('document.activeElement && document.activeElement.id'), 'identities-h');
  await page
    .getByRole('navigation', { name: 'Group sections' })
    .getByRole('link', { name: 'Role bindings' })
    .click();
  await page.getByText('0 role bindings').waitFor();
  t.is(await page.getByRole('table', { name: 'Role bindings' }).count(), 0);
});

/** The names of every button, and every link in the page's main, visible now. */
async function actionsShown(): Promise<string[]> {
  return c.page.evaluate(
    `[...document.querySelectorAll('main button, main a')].map(
      (e) => (e.getAttribute('aria-label') ?? e.textContent ?? '').trim())`,
  );
}

/**
 * Until nothing on the page says it is loading. Polled from here: waitForFunction's own
 * polling evaluates in the page, which the console's CSP (no unsafe-eval) refuses.
 */
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

/**
 * Headers, buttons and nav links whose text is one word yet laid out on more than one line
 * (a mid-word break: "Na|me", "Delet|e").
 */
const BROKEN_WORDS = `[...document.querySelectorAll('th, button, nav a')].filter((e) => {
  const text = (e.textContent ?? '').trim();
  if (text === '' || text.includes(' ') || e.getClientRects().length === 0) return false;
  const r = document.createRange();
  r.selectNodeContents(e);
  return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size > 1;
}).map((e) => e.textContent)`;

const WRITES =
  /^(Create|Delete|Rename|Bind|Subscribe|Add provider|Create repo|Create invite|New identity|Yes, delete|Save|Approve|Deny|Cancel request|Expire)/;

test('a viewer is offered no action it cannot take, on any view', async (t) => {
  const page = c.page;
  await c.signInWith(bobToken);
  await page.goto(`${c.w.s.url}/console/#/tree`);
  await page.getByRole('link', { name: 'acme', exact: true }).waitFor();
  t.deepEqual(
    (await actionsShown()).filter((a) => WRITES.test(a)),
    [],
    'tree',
  );
  t.is(await page.getByRole('heading', { name: 'New organization' }).count(), 0);
  for (const group of [org, team])
    for (const tab of TABS) {
      await page.goto(c.groupUrl(group, tab));
      await page.locator('.tab-panel h2').first().waitFor();
      await settled();
      t.deepEqual(
        (await actionsShown()).filter((a) => WRITES.test(a)),
        [],
        `${tab} of ${group === org ? 'acme' : 'team'}`,
      );
    }
  // The identity builder: no Create where it may not create identities, group picked or not.
  for (const address of [`#/builder/${encodeURIComponent(team)}`, '#/builder']) {
    await page.goto(`${c.w.s.url}/console/${address}`);
    await page.getByRole('heading', { level: 1, name: 'Identity builder' }).waitFor();
    if (address !== '#/builder')
      await page
        .getByText('You cannot create identities in this group', { exact: false })
        .waitFor();
    await settled();
    t.deepEqual(
      (await actionsShown()).filter((a) => WRITES.test(a)),
      [],
      `builder ${address}`,
    );
  }
  // The requests inbox: erin's request at deep is not bob's to decide (nor to see).
  for (const state of ['PENDING', 'all']) {
    await page.goto(`${c.w.s.url}/console/#/requests?state=${state}`);
    await page.locator('#requests-h ~ p.count').waitFor();
    await settled();
    t.deepEqual(
      (await actionsShown()).filter((a) => WRITES.test(a)),
      [],
      `requests ${state}`,
    );
  }
  // The unused-access findings: idle's binding is there, by name, with no Expire for bob.
  await page.goto(`${c.w.s.url}/console/#/unused`);
  const findings = page.getByRole('table', { name: 'Unused for 90 days' });
  await findings.getByRole('row').filter({ hasText: 'idle' }).first().waitFor();
  await settled();
  t.deepEqual(
    (await actionsShown()).filter((a) => WRITES.test(a)),
    [],
    'unused access',
  );
  // Lists it may not read say so, not "0 in all" (team has one subscription).
  await page.goto(c.groupUrl(team, 'events'));
  await page.getByText('You cannot list subscriptions here.').waitFor();
  t.is(await page.getByText(/in all/).count(), 0);
  await page.goto(c.groupUrl(team, 'audit'));
  await page.getByText('You cannot read the audit trail here.').waitFor();
  // A list it may read shows what is there.
  await page.goto(c.groupUrl(org, 'identities'));
  await page
    .getByRole('table', { name: 'Identities' })
    .getByRole('cell', { name: 'bob', exact: true })
    .waitFor();
});

const VIEWS: Array<[string, () => string, string]> = [
  ['tree', () => '#/tree', 'h1'],
  ...TABS.map((tab): [string, () => string, string] => [
    `group-${tab}`,
    () => `#/groups/${encodeURIComponent(team)}/${tab}`,
    '.tab-panel h2',
  ]),
  ['access', () => '#/access', 'h1'],
  ['audit', () => `#/audit?group=${encodeURIComponent(org)}`, 'h1'],
  ['builder', () => `#/builder/${encodeURIComponent(team)}`, 'h1'],
  ['requests', () => '#/requests', '.requests li'],
  ['unused', () => '#/unused', 'table[aria-labelledby="findings-h"]'],
];

for (const width of [1280, 420])
  test(`axe finds nothing serious on any view at ${width} px; nothing overflows; screenshots`, async (t) => {
    const page = c.page;
    await page.setViewportSize({ width, height: 900 });
    await c.signInWith(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Arbor' }).waitFor();
    t.deepEqual(
      (await axeSerious(page)).map((v) => `${v.id} (${v.impact}): ${v.help}`),
      [],
      `axe on sign-in at ${width} px`,
    );
    t.deepEqual(await page.evaluate(BROKEN_WORDS), [], `sign-in: a word broken`);
    await screenshot(page, `sign-in-${width}`);
    await c.signInWith(ADMIN_TOKEN);
    for (const [name, address, ready] of VIEWS) {
      await page.goto(`${c.w.s.url}/console/${address()}`);
      await page.locator(ready).first().waitFor();
      await settled();
      const found = await axeSerious(page);
      t.deepEqual(
        found.map((v) => `${v.id} (${v.impact}): ${v.help}`),
        [],
        `axe on ${name} at ${width} px`,
      );
      const wide = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      if (wide > width)
        t.log(
          await page.evaluate(
            `[...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > ${width}).slice(0, 8).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().width) + ' ' + (e.textContent ?? '').slice(0, 40))`,
          ),
        );
      t.true(wide <= width, `${name} at ${width} px is ${wide} px wide`);
      t.deepEqual(await page.evaluate(BROKEN_WORDS), [], `${name}: a word broken`);
      await screenshot(page, `${name}-${width}`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    t.deepEqual(c.b.incidents, []);
  });
