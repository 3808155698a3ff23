import { readFileSync } from 'node:fs';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { ADMIN_TOKEN } from '../helpers/server.js';
import { screenshot } from '../helpers/browser.js';
import { consoleTest } from '../helpers/console-test.js';

/**
 * Every view of the console, as its router lists them (console/src/routes.json: a view
 * added there is visited here without a change to this file), and every tab of a group
 * page (read from the page's own tab nav), at 1280 and 420 px: nothing serious for axe,
 * and no word broken across two lines ("platfor|m", "viewe|r"). A view whose address needs
 * an argument of a kind this file has no sample for fails, so it cannot be skipped.
 */
const c = consoleTest();
const test = c.test;

interface RouteEntry {
  view: string;
  label: string;
  arg?: string;
}
const ROUTES = (
  JSON.parse(readFileSync('console/src/routes.json', 'utf8')) as { views: RouteEntry[] }
).views;

/** A sample argument for each kind of argument a view's address may take. */
const samples: Record<string, string> = {};

test.before(async () => {
  const admin = c.w.s.admin;
  // Names that a squeezed cell would cut: "platform", "viewer", "administrators".
  const org = await createGroup(admin, 'platform', undefined, 'Every platform team');
  const team = await createGroup(admin, 'administrators', org, 'Platform administrators');
  const deep = await createGroup(admin, 'observability', team);
  const viewer = await builtinRoleUid(admin, 'viewer');
  const editor = await builtinRoleUid(admin, 'editor');
  const role = await createRole(admin, team, 'release-manager', [
    'role_bindings.create',
    'identity_providers.list',
    'repo.create',
  ]);
  const ci = await createIdentity(admin, team, 'continuous-deployment');
  await createBinding(admin, team, ci, viewer);
  await createBinding(admin, deep, ci, role);
  const person = await createIdentity(admin, deep, 'maintainer', {
    issuer: c.w.issuer.url,
    subject: 'maintainer',
  });
  await createBinding(admin, deep, person, viewer);
  // A pending request, for the requests view.
  const asked = await c.w.s
    .client(await c.w.tokenFor(person, 'maintainer'))
    .post(`/iam/v2beta1/accessRequests/${deep}`, {
      roleUid: editor,
      durationSeconds: 3600,
      reason: 'release week',
    });
  if (asked.status !== 200) throw new Error(`request: ${JSON.stringify(asked.body)}`);
  const sub = await admin.post(`/events/v2beta1/subscriptions/${team}`, {
    name: 'security-information',
    sink: 'https://security-information-and-event-management.example.com/arbor/events',
  });
  if (sub.status !== 200) throw new Error(`subscription: ${JSON.stringify(sub.body)}`);
  samples.group = team;
  samples.identity = ci;
  samples.role = role;
});

/** Polled from here: the console's CSP (no unsafe-eval) refuses waitForFunction's polling. */
async function until(expression: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await c.page.evaluate(expression)) return;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error(`never true: ${expression}`);
}

/** Until the page has its heading and nothing on it says it is loading. */
const settled = () =>
  until(`!!document.querySelector('main h1') &&
    !document.querySelector('[aria-busy="true"]') &&
    ![...document.querySelectorAll('[role="status"]')].some((e) => e.textContent === 'Loading…')`);

/**
 * The words laid out across two lines: each run of letters and digits of every visible
 * text node, measured with Range.getClientRects; a word whose boxes sit on two lines (one
 * starts below where another ends) is broken. Machine text that is broken on purpose to fit
 * (a uid, a digest, a URL, a preformatted block) is left out.
 */
const BROKEN_WORDS = `(() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest('pre, code.uid, code.digest, code.url, script, style, textarea, select, option, [hidden]')) continue;
    if (el.getClientRects().length === 0) continue;
    const text = n.data;
    for (const m of text.matchAll(/[\\p{L}\\p{N}_]+/gu)) {
      if (m[0].length < 2) continue;
      range.setStart(n, m.index);
      range.setEnd(n, m.index + m[0].length);
      const rects = [...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0);
      const broken = rects.some((a) => rects.some((b) => b.top >= a.bottom - 1));
      if (broken) out.push(m[0] + ' in "' + text.trim().slice(0, 60) + '"');
    }
  }
  return out;
})()`;

test('the broken-word check finds a word a squeezed box cuts, and passes a whole one', async (t) => {
  const page = c.page;
  await c.signInWith(ADMIN_TOKEN);
  await page.getByRole('heading', { level: 1 }).waitFor();
  // What `overflow-wrap: anywhere` in a squeezed table cell did ("viewe|r"), and the same
  // table with `break-word`, whose cell grows to its longest word instead.
  await page.evaluate(`(() => {
    for (const [id, wrap] of [['cut', 'anywhere'], ['whole', 'break-word']]) {
      const table = document.createElement('table');
      table.id = id;
      table.style.width = '3ch';
      const cell = table.insertRow().insertCell();
      cell.textContent = 'platform viewer';
      cell.style.overflowWrap = wrap;
      document.querySelector('main').append(table);
    }
  })()`);
  const found = (await page.evaluate(BROKEN_WORDS)) as string[];
  t.deepEqual(found, ['platform in "platform viewer"', 'viewer in "platform viewer"']);
  await page.evaluate(`document.getElementById('cut').remove()`);
  t.deepEqual(await page.evaluate(BROKEN_WORDS), [], 'break-word keeps them whole');
});

/** The addresses to visit: every view of the router, a group page once per tab. */
async function addresses(): Promise<Array<[string, string]>> {
  const out: Array<[string, string]> = [];
  for (const r of ROUTES) {
    if (r.arg === undefined) {
      out.push([r.view, `#/${r.view}`]);
      continue;
    }
    const sample = samples[r.arg];
    if (sample === undefined) throw new Error(`no sample ${r.arg} for the view ${r.view}`);
    const base = `#/${r.view}/${encodeURIComponent(sample)}`;
    if (r.view !== 'groups') {
      out.push([r.view, base]);
      continue;
    }
    // The group page's tabs, as the page itself lists them.
    await c.page.goto(`${c.w.s.url}/console/${base}`);
    const tabs = c.page.getByRole('navigation', { name: 'Group sections' }).getByRole('link');
    await tabs.first().waitFor();
    for (const h of await tabs.evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? '')))
      out.push([`groups ${h.split('/').at(-1)}`, h]);
  }
  return out;
}

for (const width of [1280, 420])
  test(`every view at ${width} px: nothing serious for axe, no word broken`, async (t) => {
    const page = c.page;
    await page.setViewportSize({ width, height: 900 });
    // Signed out: the sign-in page, plain and with a stale link's notice.
    await c.signInWith(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Arbor' }).waitFor();
    await c.noSeriousAxe(t, `sign-in at ${width} px`);
    t.deepEqual(await page.evaluate(BROKEN_WORDS), [], `sign-in at ${width} px`);
    await page.goto('about:blank');
    await page.goto(`${c.w.s.url}/console/#token=stale`);
    await page.locator('.sign-in .notice').waitFor();
    await c.noSeriousAxe(t, `sign-in with a notice at ${width} px`);
    t.deepEqual(await page.evaluate(BROKEN_WORDS), [], `sign-in with a notice at ${width} px`);

    await c.signInWith(ADMIN_TOKEN);
    const visited: string[] = [];
    for (const [name, address] of await addresses()) {
      await page.goto(`${c.w.s.url}/console/${address}`);
      await settled();
      visited.push(name);
      await c.noSeriousAxe(t, `${name} at ${width} px`);
      t.deepEqual(await page.evaluate(BROKEN_WORDS), [], `${name} at ${width} px: a word broken`);
      const wide = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      if (wide > width)
        t.log(
          await page.evaluate(
            `[...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > ${width}).slice(0, 12).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().width) + ' ' + (e.textContent ?? '').slice(0, 40))`,
          ),
        );
      t.true(wide <= width, `${name} at ${width} px is ${wide} px wide`);
      await screenshot(page, `view-${name.replace(/ /g, '-')}-${width}`);
    }
    // Every view of the router was seen (a group page once per tab).
    for (const r of ROUTES)
      t.true(
        visited.some((v) => v.split(' ')[0] === r.view),
        r.view,
      );
    await page.setViewportSize({ width: 1280, height: 900 });
    t.deepEqual(
      c.b.incidents.filter((x) => !/status of 401/.test(x)),
      [],
    );
  });
