import { decodeJwt } from 'jose';
import { createGroup } from '../helpers/fixtures.js';
import { createIdentity } from '../helpers/iam-fixtures.js';
import { ADMIN_TOKEN } from '../helpers/server.js';
import { screenshot } from '../helpers/browser.js';
import { consoleTest } from '../helpers/console-test.js';
import { pick } from '../helpers/picker.js';

/**
 * Conditional role bindings in the console, in a real Chromium against a real Arbor: a
 * binding's condition is shown wherever bindings are listed and can be set when binding;
 * the condition tester answers true, false and an error with its position (from the
 * server's `conditions:evaluate`); the claim tester says which conditional bindings the
 * tested claims would satisfy; and the sessions view revokes one token, which the API
 * then refuses.
 */
const c = consoleTest();
const test = c.test;
const B = '/iam/v2beta1/roleBindings';

let org: string;
let ada: string;
let viewer: string;

test.before(async () => {
  const admin = c.w.s.admin;
  org = await createGroup(admin, 'conds');
  ada = await createIdentity(admin, org, 'ada', { issuer: c.w.issuer.url, subject: 'ada' });
  viewer = ((await admin.get('/iam/v2beta1/roles?name=viewer')).body.roles[0] as { uid: string })
    .uid;
  const sub = await createGroup(admin, 'sub', org);
  // One binding of a role per identity and group: the second is one group down.
  const bind = async (at: string, condition: Record<string, string>) => {
    const r = await admin.post(`${B}/${at}`, { identityUid: ada, roleUid: viewer, condition });
    if (r.status !== 200) throw new Error(`bind: ${r.status} ${JSON.stringify(r.body)}`);
  };
  await bind(org, {
    expression: 'token.claims.team == "payments"',
    title: 'payments team only',
    description: 'while the team claim says payments',
  });
  await bind(sub, { expression: 'resource.group.path.startsWith("conds/")', title: 'below conds' });
});

test('a binding shows its condition: on the group, on the identity; bind with one', async (t) => {
  const page = c.page;
  await c.signInWith(ADMIN_TOKEN);
  await page.goto(c.groupUrl(org, 'bindings'));
  const table = page.getByRole('table', { name: 'Role bindings' });
  const row = table.getByRole('row').filter({ hasText: 'payments team only' });
  await row.waitFor();
  t.regex((await row.textContent()) ?? '', /token\.claims\.team == "payments"/);
  t.regex((await row.textContent()) ?? '', /while the team claim says payments/);
  await c.noSeriousAxe(t, 'bindings with conditions');

  // Bind with a condition through the form: the API stores what was typed.
  const form = page.getByRole('form', { name: 'Bind a role' });
  await pick(page, form, 'Identity', 'ad', 'ada');
  await pick(page, form, 'Role', 'edit', 'editor');
  await form.getByText('Condition (optional)').click();
  await form.getByLabel('Expression (CEL)').fill('request.capability == "repo.push"');
  await form.getByLabel('Condition title').fill('push only');
  await form.getByRole('button', { name: 'Bind', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Bind editor to ada?' });
  await dialog.getByText('It grants only where its condition holds').waitFor();
  await dialog.getByRole('button', { name: 'Yes, bind' }).click();
  await dialog.waitFor({ state: 'detached' });
  const made = await c.w.s.admin.get(`${B}?identity=${encodeURIComponent(ada)}`);
  const conditions = (made.body.roleBindings as Array<{ condition?: unknown }>).map(
    (b) => b.condition,
  );
  t.deepEqual(
    conditions.filter((x) => (x as { title?: string } | undefined)?.title === 'push only'),
    [{ expression: 'request.capability == "repo.push"', title: 'push only' }],
  );
  await table.getByRole('row').filter({ hasText: 'push only' }).waitFor();

  await page.goto(`${c.w.s.url}/console/#/identity/${encodeURIComponent(ada)}`);
  const mine = page.getByRole('table', { name: 'Role bindings' });
  await mine.getByText('below conds').waitFor();
  t.regex((await mine.textContent()) ?? '', /resource\.group\.path\.startsWith\("conds\/"\)/);
  await c.noSeriousAxe(t, 'identity with conditional bindings');

  // The access check shows a granting condition, and the conditions that did not hold.
  await page
    .getByRole('navigation', { name: 'Views' })
    .getByRole('link', { name: 'Access', exact: true })
    .click();
  const check = page.getByRole('region', { name: 'Check, with the reason' });
  await pick(page, check, 'Identity', 'ad', 'ada');
  await pick(page, check, 'Capability', 'groups.li', 'groups.list');
  await pick(page, check, 'Group', 'su', 'sub');
  await check.getByRole('button', { name: 'Check' }).click();
  const granted = check.getByRole('list', { name: 'Granted by' });
  await granted.getByText('below conds').waitFor();
  t.regex((await granted.textContent()) ?? '', /Only if: below conds/);
  await pick(page, check, 'Group', 'con', 'conds');
  await check.getByRole('button', { name: 'Check' }).click();
  const notHeld = check.getByRole('list', { name: 'Conditions that did not hold' });
  await notHeld.getByText('payments team only').waitFor();
  await c.noSeriousAxe(t, 'access check with conditions');

  // What-can and who-can show the conditional bindings apart, each with its condition.
  const q = new URLSearchParams({ identity: ada, group: org, capability: 'groups.list' });
  await page.goto(`${c.w.s.url}/console/#/access?${q.toString()}`);
  const what = page.getByRole('table', { name: 'What the identity can do' });
  await what.getByText('payments team only').waitFor();
  const who = page.getByRole('list', { name: 'Who can where a condition holds' });
  await who.getByText('payments team only').waitFor();
  t.regex((await who.textContent()) ?? '', /ada/);
  await c.noSeriousAxe(t, 'what-can and who-can with conditions');
  t.deepEqual(c.b.incidents, []);
});

test('the condition tester answers true, false, and an error with its position', async (t) => {
  const page = c.page;
  await page.goto(`${c.w.s.url}/console/#/conditions`);
  const tester = page.getByRole('region', { name: 'Condition tester' });
  await tester.getByLabel('Expression (CEL)').fill('request.capability == "repo.push"');
  await tester.getByLabel('request.capability').fill('repo.push');
  await tester.getByRole('button', { name: 'Test' }).click();
  const answer = tester.locator('.condition-answer');
  await answer.getByText('Holds (true)').waitFor();
  const values = tester.getByRole('table', { name: 'Values read' });
  t.regex((await values.textContent()) ?? '', /request\.capability"repo\.push"/);

  await tester.getByLabel('request.capability').fill('repo.pull');
  await tester.getByRole('button', { name: 'Test' }).click();
  await answer.getByText('Does not hold (false)').waitFor();

  await tester.getByLabel('Expression (CEL)').fill('request.capability == nope');
  await tester.getByRole('button', { name: 'Test' }).click();
  await answer.getByText('Does not check').waitFor();
  const error = (await answer.locator('.condition-error').textContent()) ?? '';
  t.regex(error, /Check error at position 22: undeclared reference to 'nope'/);
  t.is(await answer.locator('.condition-marked mark').textContent(), 'n');
  await c.noSeriousAxe(t, 'condition tester');
  await screenshot(page, 'condition-tester');

  // Checks, but the claim is missing: an evaluation error, a denial.
  await tester.getByLabel('Expression (CEL)').fill('token.claims.team == "payments"');
  await tester.getByRole('button', { name: 'Test' }).click();
  await answer.getByText('Does not evaluate').waitFor();
  await tester.getByLabel(/^token\.claims/).fill('team=payments');
  await tester.getByRole('button', { name: 'Test' }).click();
  await answer.getByText('Holds (true)').waitFor();
  t.deepEqual(c.b.incidents, []);
});

test('the claim tester says which conditional bindings the claims would satisfy', async (t) => {
  const page = c.page;
  await page.goto(`${c.w.s.url}/console/#/conditions`);
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: c.w.issuer.url,
    sub: 'ada',
    aud: c.w.s.arbor.config.issuerUrl,
    iat: now,
    exp: now + 600,
    team: 'payments',
  };
  const tester = page.getByRole('region', { name: 'Claim tester' });
  await tester.getByLabel('A JWT, or its claims as JSON').fill(JSON.stringify(claims));
  await tester.getByRole('button', { name: 'Test' }).click();
  const table = tester.getByRole('table', { name: 'Conditional bindings with these claims' });
  await table.waitFor();
  const verdict = async (title: string) =>
    (await table.getByRole('row').filter({ hasText: title }).locator('td').last().textContent()) ??
    '';
  t.is(await verdict('payments team only'), 'would hold');
  t.is(await verdict('below conds'), 'depends on the resource');
  await c.noSeriousAxe(t, 'claim tester with conditions');

  // The same on the identity's own page, against that identity alone.
  await page.goto(`${c.w.s.url}/console/#/identity/${encodeURIComponent(ada)}`);
  const own = page.getByRole('region', { name: 'Claim tester' });
  await own.getByLabel('A JWT, or its claims as JSON').fill(JSON.stringify(claims));
  await own.getByRole('button', { name: 'Test' }).click();
  const ownTable = own.getByRole('table', { name: 'Conditional bindings with these claims' });
  await ownTable
    .getByRole('row')
    .filter({ hasText: 'payments team only' })
    .getByText('would hold')
    .waitFor();
  await c.noSeriousAxe(t, 'claim tester on the identity page');
  await page.goto(`${c.w.s.url}/console/#/conditions`);

  await tester
    .getByLabel('A JWT, or its claims as JSON')
    .fill(JSON.stringify({ ...claims, team: 'web' }));
  await tester.getByRole('button', { name: 'Test' }).click();
  await table
    .getByRole('row')
    .filter({ hasText: 'payments team only' })
    .getByText('would not hold')
    .waitFor();
  t.deepEqual(c.b.incidents, []);
});

test('sessions: revoke one token after asking; the list is read again; the API refuses it', async (t) => {
  const page = c.page;
  const kept = await c.w.tokenFor(ada, 'ada');
  const doomed = await c.w.tokenFor(ada, 'ada');
  const jti = (token: string) => decodeJwt(token).jti as string;
  // Issued tokens are recorded in batches: wait until both are listed.
  for (let i = 0; ; i++) {
    const r = await c.w.s.client(kept).get('/iam/v2beta1/tokens');
    const listed = (r.body.tokens as Array<{ jti: string }>).map((x) => x.jti);
    if (listed.includes(jti(kept)) && listed.includes(jti(doomed))) break;
    if (i > 100) throw new Error(`not listed: ${JSON.stringify(r.body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await c.signInWith(kept);
  await page.goto(`${c.w.s.url}/console/#/sessions`);
  const table = page.getByRole('table', { name: 'Your live API tokens' });
  const row = (token: string) => table.locator(`tr[data-jti="${jti(token)}"]`);
  await row(doomed).waitFor();
  t.regex((await row(kept).textContent()) ?? '', /this console/);
  await c.noSeriousAxe(t, 'sessions');

  await row(doomed)
    .getByRole('button', { name: /^Revoke/ })
    .click();
  const dialog = page.getByRole('dialog', { name: 'Revoke this token?' });
  // Cancel does nothing.
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
  t.is((await c.w.s.client(doomed).get('/iam/v2beta1/tokens')).status, 200);

  await row(doomed)
    .getByRole('button', { name: /^Revoke/ })
    .click();
  await dialog.getByRole('button', { name: 'Yes, revoke' }).click();
  await dialog.waitFor({ state: 'detached' });
  await row(doomed).waitFor({ state: 'detached' });
  await row(kept).waitFor();
  t.is((await c.w.s.client(doomed).get('/iam/v2beta1/tokens')).status, 401);
  t.is((await c.w.s.client(kept).get('/iam/v2beta1/tokens')).status, 200);
  await screenshot(page, 'sessions');
  t.deepEqual(c.b.incidents, []);
});
