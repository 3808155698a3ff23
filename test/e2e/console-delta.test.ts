import type { Locator, Request } from 'playwright-core';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { ADMIN_TOKEN } from '../helpers/server.js';
import { axeSerious, screenshot } from '../helpers/browser.js';
import { consoleTest } from '../helpers/console-test.js';
import { pick } from '../helpers/picker.js';

/**
 * Review before change in a real Chromium against a real Arbor: binding
 * a role (by names, through the pickers), deleting a binding or an identity, and changing a
 * role's capabilities each show what the server's `access:simulate` says the change does to
 * access, by name and with counts, before the confirm button; nothing is written until
 * confirm; a paged answer is counted page by page; a change the caller may not make says
 * so; a failed simulation is shown and does not block. axe checks every dialog at 1280 and
 * 420 px, each leaving a screenshot.
 */
const c = consoleTest();
const test = c.test;

let org: string;
let platform: string;
let web: string;
let eve: string;
let dan: string;
let pusher: string;
let crew: string;
let leadToken: string;
const CREW = 201;
/** Every access:simulate body and every write the page sent, in order. */
const sent: Array<{ method: string; path: string; body: unknown }> = [];

test.before(async () => {
  const admin = c.w.s.admin;
  org = await createGroup(admin, 'acme');
  platform = await createGroup(admin, 'platform', org);
  web = await createGroup(admin, 'web', platform);
  const viewer = await builtinRoleUid(admin, 'viewer');
  const editor = await builtinRoleUid(admin, 'editor');
  pusher = await createRole(admin, org, 'pusher', ['repo.list']);
  for (const name of ['ann', 'ben', 'cat'])
    await createBinding(admin, platform, await createIdentity(admin, org, name), pusher);
  dan = await createIdentity(admin, org, 'dan');
  await createBinding(admin, platform, dan, viewer);
  await createBinding(admin, web, dan, editor);
  eve = await createIdentity(admin, org, 'eve');
  // More identities than one page of the delta holds (200), all bound to one role at web.
  crew = await createRole(admin, org, 'crew', ['groups.list']);
  const members = await Promise.all(
    Array.from({ length: CREW }, (_, i) =>
      createIdentity(admin, web, `m${String(i).padStart(3, '0')}`),
    ),
  );
  await Promise.all(members.map((m) => createBinding(admin, web, m, crew)));
  // lead may bind roles in acme, but holds too little to hand out owner (no escalation).
  const binder = await createRole(admin, org, 'binder', [
    'groups.list',
    'identity.list',
    'roles.list',
    'role_bindings.list',
    'role_bindings.create',
  ]);
  const lead = await createIdentity(admin, org, 'lead', {
    issuer: c.w.issuer.url,
    subject: 'lead',
  });
  await createBinding(admin, org, lead, binder);
  leadToken = await c.w.tokenFor(lead, 'lead');
  c.page.on('request', (r: Request) => {
    const path = new URL(r.url()).pathname;
    if (r.method() !== 'GET' && path.startsWith('/iam/'))
      sent.push({ method: r.method(), path, body: r.postDataJSON() as unknown });
  });
});

/** The writes (not simulations) sent since `from`. */
const writesSince = (from: number) =>
  sent.slice(from).filter((r) => !r.path.endsWith('access:simulate'));

/**
 * The dialog's delta once the server has answered: each line's head ("3 identities gain
 * repo.list in acme/platform: ann, ben, cat") and, where it names several, its capabilities.
 */
async function deltaOf(
  dialog: Locator,
): Promise<{ region: Locator; lines: string[]; caps: string[][] }> {
  const region = dialog.getByRole('region', { name: 'What this changes' });
  await region.getByRole('heading', { name: 'What this changes to access' }).waitFor();
  const items = region.locator('.delta-lines > li');
  const lines = await items.locator('.delta-head').allTextContents();
  const caps: string[][] = [];
  for (const li of await items.all())
    caps.push(await li.locator('.delta-caps code').allTextContents());
  return { region, lines, caps };
}

/**
 * axe on the page (the open dialog, if any) at 1280 and 420 px, a screenshot of each, and
 * nothing wider than the screen.
 */
async function checkDialog(t: any, name: string) {
  const page = c.page;
  for (const width of [1280, 420]) {
    await page.setViewportSize({ width, height: 900 });
    const found = await axeSerious(page);
    t.deepEqual(
      found.map((v) => `${v.id} (${v.impact}): ${v.help}`),
      [],
      `axe on ${name} at ${width} px`,
    );
    const wide = (await page.evaluate(
      `document.querySelector('dialog[open]')
        ? Math.ceil(document.querySelector('dialog[open]').getBoundingClientRect().right)
        : document.documentElement.scrollWidth`,
    )) as number;
    t.true(wide <= width, `${name} at ${width} px reaches ${wide} px`);
    await screenshot(page, `delta-${name}-${width}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

test('bind a role by names: the delta before confirming; cancel writes nothing; confirm binds', async (t) => {
  const page = c.page;
  await c.signInWith(ADMIN_TOKEN);
  await page.goto(c.groupUrl(platform, 'bindings'));
  await page.getByRole('heading', { level: 1, name: 'platform' }).waitFor();
  const form = page.getByRole('form', { name: 'Bind a role' });
  await pick(page, form, 'Identity', 'ev', 'eve');
  // The chosen identity's uid is shown small, never typed.
  t.is(await form.locator('code.uid').first().textContent(), eve);
  await pick(page, form, 'Role', 'edi', 'editor');
  const before = sent.length;
  await form.getByRole('button', { name: 'Bind', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Bind editor to eve?' });
  const { lines, caps } = await deltaOf(dialog);
  // eve held nothing: she gains every capability of editor, at platform, on one line.
  const editorCaps = (await c.w.s.admin.get(`/iam/v2beta1/roles/${await editorUid()}`)).body
    .capabilities as string[];
  t.deepEqual(lines, [`1 identity gains ${editorCaps.length} capabilities in acme/platform: eve`]);
  t.deepEqual([...(caps[0] ?? [])].sort(), [...editorCaps].sort());
  t.true(caps[0]?.includes('tag.create'));
  // The review is the server's: exactly the binding the form would make, and no write yet.
  t.deepEqual(
    sent.slice(before).map((r) => r.path),
    ['/iam/v2beta1/access:simulate'],
  );
  t.deepEqual((sent[before]?.body as { changes: unknown }).changes, [
    { createRoleBinding: { groupUid: platform, identityUid: eve, roleUid: await editorUid() } },
  ]);
  const yes = dialog.getByRole('button', { name: 'Yes, bind' });
  t.is(
    await page.evaluate('document.activeElement && document.activeElement.textContent'),
    'Yes, bind',
    'the focus is on the confirm button',
  );
  // The delta stands above the confirm button.
  t.true(
    (await dialog.locator('.access-delta ~ .dialog-actions').count()) === 1,
    'the delta is before the buttons',
  );
  await checkDialog(t, 'bind');

  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
  t.deepEqual(writesSince(before), [], 'cancel writes nothing');
  const none = await c.w.s.admin.get(
    `/iam/v2beta1/roleBindings?identity=${encodeURIComponent(eve)}`,
  );
  t.is(none.body.totalCount, '0');

  await form.getByRole('button', { name: 'Bind', exact: true }).click();
  await deltaOf(dialog);
  await yes.click();
  await dialog.waitFor({ state: 'detached' });
  await page
    .getByRole('table', { name: 'Role bindings' })
    .getByRole('row')
    .filter({ hasText: 'eve' })
    .filter({ hasText: 'editor' })
    .waitFor();
  t.deepEqual(
    writesSince(before).map((r) => [r.method, r.path, r.body]),
    [
      [
        'POST',
        `/iam/v2beta1/roleBindings/${platform}`,
        { identityUid: eve, roleUid: await editorUid() },
      ],
    ],
    'one write, of what was reviewed',
  );
  const made = await c.w.s.admin.get(
    `/iam/v2beta1/roleBindings?identity=${encodeURIComponent(eve)}`,
  );
  t.is(made.body.totalCount, '1');
  t.is(await page.evaluate('document.activeElement && document.activeElement.id'), 'bindings-h');
  t.deepEqual(c.b.incidents, []);
});

async function editorUid(): Promise<string> {
  return builtinRoleUid(c.w.s.admin, 'editor');
}

test('deleting a role binding shows what it takes away; cancel keeps it', async (t) => {
  const page = c.page;
  await page.goto(c.groupUrl(platform, 'bindings'));
  await page.getByRole('heading', { level: 1, name: 'platform' }).waitFor();
  await page.getByRole('button', { name: 'Delete the binding of pusher to ann' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete the binding of pusher to ann?' });
  const { lines } = await deltaOf(dialog);
  t.deepEqual(lines, ['1 identity loses repo.list in acme/platform: ann']);
  const before = sent.length;
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  t.deepEqual(writesSince(before), []);
  const kept = await c.w.s.admin.get(
    `/iam/v2beta1/roleBindings?role=${encodeURIComponent(pusher)}`,
  );
  t.is(kept.body.totalCount, '3');
});

test('deleting an identity with bindings shows everything it loses, then deletes it', async (t) => {
  const page = c.page;
  await page.goto(c.groupUrl(org, 'identities'));
  await page.getByRole('heading', { level: 1, name: 'acme' }).waitFor();
  await page.getByRole('button', { name: 'Delete identity dan' }).click();
  const dialog = page.getByRole('dialog', { name: 'Delete identity dan?' });
  t.regex((await dialog.locator('p').first().textContent()) ?? '', /and its 2 role bindings/);
  const { lines, caps } = await deltaOf(dialog);
  // viewer at platform (web below it included), and what only editor grants, at web.
  t.is(lines.length, 2, lines.join('\n'));
  t.regex(lines[0] ?? '', /^1 identity loses \d+ capabilities in acme\/platform: dan$/);
  t.regex(lines[1] ?? '', /^1 identity loses \d+ capabilities in acme\/platform\/web: dan$/);
  t.true(caps[0]?.includes('groups.list'));
  t.true(caps[1]?.includes('repo.create'));
  t.false(caps[1]?.includes('groups.list'), 'held at web through platform: lost there');
  await checkDialog(t, 'delete-identity');
  await dialog.getByRole('button', { name: 'Yes, delete' }).click();
  await dialog.waitFor({ state: 'detached' });
  t.is((await c.w.s.admin.get(`/iam/v2beta1/identities/${dan}`)).status, 404);
  t.deepEqual(c.b.incidents, []);
});

test("changing a role's capabilities shows who gains and loses what, then changes it", async (t) => {
  const page = c.page;
  await page.goto(c.groupUrl(org, 'roles'));
  const roles = page.getByRole('table', { name: 'Roles defined here' });
  await roles.getByRole('cell', { name: 'pusher', exact: true }).waitFor();
  await page.getByRole('button', { name: 'Edit the capabilities of pusher' }).click();
  const edit = page.getByRole('form', { name: 'Capabilities of pusher' });
  await pick(page, edit, 'Add a capability', 'tag.cr', 'tag.create');
  await edit.getByRole('button', { name: 'Add', exact: true }).click();
  await edit.getByRole('button', { name: 'Remove repo.list' }).click();
  // The roles tab with its capability editor open, before any dialog.
  await checkDialog(t, 'roles-tab');
  const before = sent.length;
  await edit.getByRole('button', { name: 'Review the change' }).click();
  const dialog = page.getByRole('dialog', { name: 'Change the capabilities of pusher?' });
  const { lines } = await deltaOf(dialog);
  t.deepEqual(lines, [
    '3 identities lose repo.list in acme/platform: ann, ben, cat',
    '3 identities gain tag.create in acme/platform: ann, ben, cat',
  ]);
  t.deepEqual(writesSince(before), [], 'the review writes nothing');
  await checkDialog(t, 'role-capabilities');
  await dialog.getByRole('button', { name: 'Yes, change' }).click();
  await dialog.waitFor({ state: 'detached' });
  await roles
    .getByRole('row')
    .filter({ hasText: 'pusher' })
    .locator('.role-caps', { hasText: /^tag\.create$/ })
    .waitFor();
  const role = await c.w.s.admin.get(`/iam/v2beta1/roles/${pusher}`);
  t.deepEqual(role.body.capabilities, ['tag.create']);
  t.deepEqual(
    writesSince(before).map((r) => [r.method, r.body]),
    [['PATCH', { capabilities: ['tag.create'] }]],
  );
  t.deepEqual(c.b.incidents, []);
});

test('an answer longer than a page is counted page by page', async (t) => {
  const page = c.page;
  await page.goto(c.groupUrl(org, 'roles'));
  await page.getByRole('button', { name: 'Edit the capabilities of crew' }).click();
  const edit = page.getByRole('form', { name: 'Capabilities of crew' });
  await pick(page, edit, 'Add a capability', 'repo.li', 'repo.list');
  await edit.getByRole('button', { name: 'Add', exact: true }).click();
  await edit.getByRole('button', { name: 'Review the change' }).click();
  const dialog = page.getByRole('dialog', { name: 'Change the capabilities of crew?' });
  const { region, lines } = await deltaOf(dialog);
  t.deepEqual(lines.length, 1);
  t.regex(
    lines[0] ?? '',
    /^200 identities gain repo\.list in acme\/platform\/web: (m\d{3}, ){7}m\d{3} and 192 more$/,
  );
  const partial = region.locator('.delta-partial');
  t.is(
    (await partial.textContent())?.replace(/Count the next.*$/, '').trim(),
    `Counted from 200 of ${CREW} changes in access.`,
  );
  await partial.getByRole('button', { name: 'Count the next 1' }).click();
  await region
    .locator('.delta-lines > li')
    .filter({ hasText: `${CREW} identities gain repo.list in acme/platform/web` })
    .waitFor();
  t.is(await partial.count(), 0, 'all counted');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  t.deepEqual((await c.w.s.admin.get(`/iam/v2beta1/roles/${crew}`)).body.capabilities, [
    'groups.list',
  ]);
});

test('a change the caller may not make says so, and the refusal stays in the dialog', async (t) => {
  const page = c.page;
  await c.signInWith(leadToken);
  await page.goto(c.groupUrl(platform, 'bindings'));
  const form = page.getByRole('form', { name: 'Bind a role' });
  await pick(page, form, 'Identity', 'ev', 'eve');
  await pick(page, form, 'Role', 'own', 'owner');
  await form.getByRole('button', { name: 'Bind', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Bind owner to eve?' });
  const { region, lines, caps } = await deltaOf(dialog);
  t.regex(
    (await region.getByRole('alert').textContent()) ?? '',
    /^You may not make this change: the server will refuse it/,
  );
  // Still simulated: eve would gain what owner has beyond editor.
  t.deepEqual(lines.length, 1);
  t.regex(lines[0] ?? '', /^1 identity gains \d+ capabilities in acme\/platform: eve$/);
  t.true(caps[0]?.includes('role_bindings.create'));
  t.false(caps[0]?.includes('tag.create'), 'held already through editor');
  await checkDialog(t, 'not-permitted');
  await dialog.getByRole('button', { name: 'Yes, bind' }).click();
  await dialog.locator('.error .code').filter({ hasText: 'PERMISSION_DENIED' }).waitFor();
  const held = await c.w.s.admin.get(
    `/iam/v2beta1/roleBindings?identity=${encodeURIComponent(eve)}`,
  );
  t.is(held.body.totalCount, '1', 'only the editor binding');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  // lead may list roles but not change them: the roles tab offers no Edit (nor Delete).
  await page.goto(c.groupUrl(org, 'roles'));
  const roles = page.getByRole('table', { name: 'Roles defined here' });
  await roles.getByRole('cell', { name: 'pusher', exact: true }).waitFor();
  t.is(await roles.getByRole('button').count(), 0);
  t.deepEqual(c.b.incidents, []);
});

test('a failed simulation is shown and does not block the decision', async (t) => {
  const page = c.page;
  await c.signInWith(ADMIN_TOKEN);
  await page.route('**/iam/v2beta1/access:simulate', (r) =>
    r.fulfill({
      status: 503,
      contentType: 'application/json',
      body: JSON.stringify({ code: 14, message: 'the simulator is away' }),
    }),
  );
  try {
    await page.goto(c.groupUrl(platform, 'bindings'));
    await page.getByRole('button', { name: 'Delete the binding of pusher to ben' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete the binding of pusher to ben?' });
    await dialog.getByText('Arbor could not work out what this changes to access.').waitFor();
    t.regex(
      (await dialog.locator('.error').textContent()) ?? '',
      /UNAVAILABLE: the simulator is away/,
    );
    await checkDialog(t, 'simulate-failed');
    await dialog.getByRole('button', { name: 'Yes, delete' }).click();
    await dialog.waitFor({ state: 'detached' });
  } finally {
    await page.unroute('**/iam/v2beta1/access:simulate');
  }
  const left = await c.w.s.admin.get(
    `/iam/v2beta1/roleBindings?role=${encodeURIComponent(pusher)}`,
  );
  t.is(left.body.totalCount, '2');
});
