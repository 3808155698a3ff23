import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { ADMIN_TOKEN, must } from '../helpers/server.js';
import { axeSerious, screenshot } from '../helpers/browser.js';
import { consoleTest } from '../helpers/console-test.js';

/**
 * Tenants write names, descriptions and claim values; the console shows them as text.
 * Markup is planted everywhere the console shows tenant data (through the API where its
 * validation lets it in, straight into the database where it does not, as an older or
 * compromised writer might), and every view is visited: nothing may run, no element may
 * be made from it, and the text must be on the page as written. Then a folder of 60,000
 * children: the tree shows one page of it and a "More" control, never 60,000 rows.
 */
const c = consoleTest();
const test = c.test;

const MARK = 'window.__pwned=(window.__pwned||0)+1';
const HOSTILE = [
  `<img src=x onerror="${MARK}">`,
  `<script>${MARK}</script>`,
  `"><svg onload="${MARK}">`,
  `javascript:${MARK}`,
];
const NAME = HOSTILE[0]!;
const TEXT = HOSTILE.join(' ');

let org: string;
let folder: string;
let person: string;
let big: string;

test.before(async () => {
  const knex = c.w.s.db.knex;
  org = await createGroup(c.w.s.admin, 'evil-corp', undefined, TEXT);
  folder = await createGroup(c.w.s.admin, 'folder', org, TEXT);
  person = await createIdentity(c.w.s.admin, folder, 'person', {
    issuer: c.w.issuer.url,
    subject: 'person',
    claims: { team: TEXT },
  });
  await must(
    'describe identity',
    c.w.s.api.PATCH('/iam/v2beta1/identities/{uid}', {
      params: { path: { uid: person } },
      body: { description: TEXT },
    }),
  );
  await createBinding(c.w.s.admin, folder, person, await builtinRoleUid(c.w.s.admin, 'editor'));
  const repo = await must(
    'repo',
    c.w.s.api.POST('/registry/v2beta1/repos/{uid}', {
      params: { path: { uid: folder } },
      body: { name: 'app', description: TEXT },
    }),
  );
  // Names the API's validation refuses, as a row could still hold them.
  for (const uid of [org, folder]) {
    await knex('groups').where({ uid }).update({ name: NAME });
    await knex('group_closure').where({ uid }).update({ name: NAME });
  }
  await knex('identities').where({ uid: person }).update({ name: NAME });
  await knex('repos').where({ uid: repo.uid }).update({ name: NAME });

  // 60,000 children, seeded in SQL (the API would take minutes), with their closure rows
  // and counts as the store keeps them.
  big = await createGroup(c.w.s.admin, 'big', org);
  await knex.raw(
    `INSERT INTO groups (uid, parent_uid, name)
       SELECT ? || '/' || lpad(to_hex(i), 16, '0'), ?, 'team-' || lpad(i::text, 5, '0')
       FROM generate_series(1, 60000) AS i`,
    [big, big],
  );
  await knex.raw(
    `INSERT INTO group_closure (ancestor_uid, uid, depth, name, created_at)
       SELECT a.ancestor_uid, g.uid, a.depth + 1, g.name, g.created_at
       FROM groups g
       JOIN (SELECT ?::text COLLATE "C" AS ancestor_uid, 0 AS depth
             UNION ALL SELECT ?::text COLLATE "C", 1) a ON true
       WHERE g.parent_uid = ?`,
    [big, org, big],
  );
  await knex.raw(
    `INSERT INTO group_counts (uid, children, descendants)
       SELECT uid, 0, 0 FROM groups WHERE parent_uid = ? ON CONFLICT DO NOTHING`,
    [big],
  );
  await knex('group_counts').where({ uid: big }).increment({ children: 60000, descendants: 60000 });
  await knex('group_counts').where({ uid: org }).increment({ descendants: 60000 });
});

/** Nothing ran, nothing was made from the planted markup, and the text is shown as text. */
async function nothingRan(t: any, view: string, expectText = true) {
  const page = c.page;
  t.is(await page.evaluate('window.__pwned'), undefined, `${view}: a planted script ran`);
  t.is(await page.locator('img, svg, iframe, object, embed').count(), 0, `${view}: an element`);
  t.is(await page.locator('script').count(), 1, `${view}: a script element`);
  t.is(await page.locator('a[href^="javascript:"]').count(), 0, `${view}: a javascript: link`);
  if (expectText) {
    const body = (await page.locator('main').textContent()) ?? '';
    t.true(body.includes(NAME), `${view}: the planted text is shown as written`);
  }
  t.deepEqual(c.b.incidents, [], view);
  const axe = await axeSerious(page);
  t.deepEqual(
    axe.map((v) => `${v.id} (${v.impact})`),
    [],
    `${view}: axe`,
  );
}

test('hostile names, descriptions and claim values are shown as text in every view', async (t) => {
  const page = c.page;
  await c.signInWith(ADMIN_TOKEN);
  await page.getByRole('link', { name: NAME }).first().waitFor();
  await nothingRan(t, 'tree (root)');

  await page.goto(`${c.w.s.url}/console/#/tree/${encodeURIComponent(folder)}`);
  await page.getByRole('heading', { level: 1, name: NAME }).waitFor();
  await page.getByRole('navigation', { name: 'Breadcrumbs' }).getByRole('link').nth(1).waitFor();
  await nothingRan(t, 'tree (folder)');
  // A name the API refuses, typed into a form: the refusal is shown as text too.
  await page.getByLabel('Name', { exact: true }).fill(NAME);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await page.getByRole('alert').waitFor();
  t.regex((await page.getByRole('alert').textContent()) ?? '', /^INVALID_ARGUMENT: /);
  await nothingRan(t, 'tree (refused create)');

  // Every tab of the group page, each its own address.
  const tab = (name: string) =>
    page.goto(`${c.w.s.url}/console/#/groups/${encodeURIComponent(folder)}/${name}`);
  await tab('bindings');
  await page
    .getByRole('table', { name: 'Role bindings' })
    .getByRole('cell', { name: NAME, exact: true })
    .waitFor();
  await nothingRan(t, 'group (bindings)');
  await screenshot(page, 'hostile-group');
  await tab('registry');
  await page
    .getByRole('table', { name: 'Repos' })
    .getByRole('cell', { name: NAME, exact: true })
    .waitFor();
  await nothingRan(t, 'group (registry)');
  await tab('identities');
  await page.getByRole('table', { name: 'Identities' }).waitFor();
  await nothingRan(t, 'group (identities)');

  await page.goto(`${c.w.s.url}/console/#/access?identity=${encodeURIComponent(person)}`);
  await page.getByRole('table', { name: 'What the identity can do' }).waitFor();
  await nothingRan(t, 'access', false);

  await page.goto(`${c.w.s.url}/console/#/audit?group=${encodeURIComponent(org)}`);
  await page.locator('ol.timeline li').first().waitFor();
  await nothingRan(t, 'audit', false);

  await page.goto(`${c.w.s.url}/console/#/builder/${encodeURIComponent(folder)}`);
  await page.getByLabel('Name', { exact: true }).fill(NAME);
  await page.getByLabel('Description', { exact: true }).fill(TEXT);
  await page.getByLabel('Other claims, one claim=value a line').fill(`team=${TEXT}`);
  await page.getByLabel('A JWT, or its claims as JSON').fill(JSON.stringify({ team: TEXT }));
  await page.getByRole('button', { name: 'Test' }).click();
  await page.locator('.test-results, #tester-h ~ [role="alert"]').first().waitFor();
  t.true(
    ((await page.getByLabel('Identity CRD YAML').textContent()) ?? '').includes(
      JSON.stringify(NAME),
    ),
  );
  // The builder shows the name JSON-quoted (in the YAML, checked above), not verbatim.
  await nothingRan(t, 'identity builder', false);
  await screenshot(page, 'hostile-builder');
});

test('a folder of 60,000 children shows one page, its count, and a More control', async (t) => {
  const page = c.page;
  await page.goto(`${c.w.s.url}/console/#/tree/${encodeURIComponent(big)}`);
  const count = page.locator('#children-h ~ p.count');
  await count.waitFor();
  t.is(await count.textContent(), '60000 children, showing 1–50');
  const rows = page.locator('table.rows tbody tr');
  t.is(await rows.count(), 50);
  t.is(await rows.first().getByRole('link').first().textContent(), 'team-00001');
  const more = page.getByRole('button', { name: 'More' });
  t.true(await more.isEnabled());
  await more.click();
  await page.getByText('60000 children, showing 51–100').waitFor();
  t.is(await rows.count(), 50);
  t.is(await rows.first().getByRole('link').first().textContent(), 'team-00051');
  await page.getByRole('button', { name: 'Back' }).click();
  await page.getByText('60000 children, showing 1–50').waitFor();
  // Exact-name search finds one child among them.
  await page.getByLabel('Group name').fill('team-54321');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.locator('ul.hits').getByRole('link', { name: 'team-54321' }).waitFor();
  t.is(await page.locator('ul.hits li').count(), 1);
  await screenshot(page, 'tree-60000');
  t.deepEqual(c.b.incidents, []);
});
