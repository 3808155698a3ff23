import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { axeSerious, screenshot } from '../helpers/browser.js';
import { consoleTest } from '../helpers/console-test.js';
import { pick, typeName } from '../helpers/picker.js';

/**
 * The console's access requests inbox, by names alone: a requester asks for
 * a role, an approver sees it in the inbox and approves it (asked first, with what the
 * binding would grant; Cancel changes nothing), is told so, and the binding appears on the
 * group page; an approval short of the last says how many stand; nobody is offered the
 * approval of their own request (and the API refuses it too); a deny and a cancel ask
 * first; a viewer is offered no action. axe on the approve dialog, and at 1280 and 420 px
 * on the populated inbox, with screenshots. The owner of the folder payments alone, who may
 * not read alice (she lives at acme), sees her request by path and approves it through the
 * dialog; the binding is made, and she stays out of his sight.
 */
const c = consoleTest();
const test = c.test;

let payments: string;
let alice: string;
let aliceToken: string;
let daveToken: string;
let vicToken: string;
let editor: string;
let viewer: string;
let ledger: string;

test.before(async () => {
  const acme = await createGroup(c.w.s.admin, 'acme');
  payments = await createGroup(c.w.s.admin, 'payments', acme);
  ledger = await createGroup(c.w.s.admin, 'ledger', payments);
  viewer = await builtinRoleUid(c.w.s.admin, 'viewer');
  editor = await builtinRoleUid(c.w.s.admin, 'editor');
  const owner = await builtinRoleUid(c.w.s.admin, 'owner');
  const person = async (name: string) => {
    const uid = await createIdentity(c.w.s.admin, acme, name, {
      issuer: c.w.issuer.url,
      subject: name,
    });
    return { uid, token: async () => c.w.tokenFor(uid, name) };
  };
  // alice may look at payments and asks; dave owns acme and approves; vic only views.
  const a = await person('alice');
  alice = a.uid;
  await createBinding(c.w.s.admin, payments, alice, viewer);
  const d = await person('dave');
  await createBinding(c.w.s.admin, acme, d.uid, owner);
  const v = await person('vic');
  await createBinding(c.w.s.admin, acme, v.uid, viewer);
  [aliceToken, daveToken, vicToken] = await Promise.all([a.token(), d.token(), v.token()]);
});

const inbox = () => c.page.getByRole('list', { name: 'Pending' });
const request = (text: RegExp) => inbox().getByRole('listitem').filter({ hasText: text });

/** Until the page's condition holds (polled from here: the CSP refuses in-page polling). */
async function until(f: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await f()) return;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error(`never: ${what}`);
}

/** The names of the buttons in main, visible now. */
async function buttons(): Promise<string[]> {
  return c.page.evaluate(
    `[...document.querySelectorAll('main button')].map((e) => (e.textContent ?? '').trim())`,
  );
}

async function ask(role: string, why: string) {
  const page = c.page;
  const form = page.getByRole('form', { name: 'Ask for a role' });
  await pick(page, form, 'At group', 'pay', 'payments');
  await pick(page, form, 'Role', role.slice(0, 3), role);
  await form.getByLabel('For').selectOption({ label: '8 hours' });
  await typeName(form.getByLabel('Why'), why);
  await form.getByRole('button', { name: 'Ask' }).click();
  await form.getByText('Asked: your request waits for its approvers.').waitFor();
}

test('a requester asks, an approver approves by names, the binding appears', async (t) => {
  const page = c.page;
  await c.signInWith(aliceToken);
  await page
    .getByRole('navigation', { name: 'Views' })
    .getByRole('link', { name: 'Requests' })
    .click();
  await page.getByRole('heading', { level: 1, name: 'Access requests' }).waitFor();
  await ask('editor', 'on call this week');
  await ask('registry.pull', 'read the images');
  // Her own requests: by names, Cancel, never Approve or Deny.
  const mine = request(/You ask for role editor/);
  await mine.waitFor();
  t.regex((await mine.textContent()) ?? '', /payments for 8 hours/);
  t.regex((await mine.textContent()) ?? '', /on call this week/);
  await until(async () => (await mine.getByRole('button').count()) > 0, 'her actions');
  t.deepEqual(
    (await buttons()).filter((x) => /^(Approve|Deny)/.test(x)),
    [],
    'no Approve or Deny on her own requests',
  );
  t.is(await mine.getByRole('button', { name: 'Cancel request' }).count(), 1);

  await c.signInWith(daveToken);
  await page.goto(`${c.w.s.url}/console/#/requests`);
  const hers = request(/alice asks for role editor/);
  await hers.waitFor();
  // Names, not uids.
  const text = (await hers.textContent()) ?? '';
  t.regex(text, /alice asks for role editor at acme \/ payments for 8 hours/);
  t.false(text.includes(alice), 'the requester by name');
  t.false(text.includes(editor), 'the role by name');
  // Approve asks first, showing what the binding would grant; Cancel does nothing.
  await hers.getByRole('button', { name: 'Approve' }).click();
  const dialog = page.getByRole('dialog', { name: 'Approve this request?' });
  await dialog.waitFor();
  t.regex(
    (await dialog.textContent()) ?? '',
    /Approving grants alice the role editor at acme \/ payments and everything below it, for 8 hours from the approval\./,
  );
  const region = dialog.getByRole('region', { name: 'What this changes' });
  await region.getByRole('heading', { name: 'What this changes to access' }).waitFor();
  const heads = await region.locator('.delta-lines > li .delta-head').allTextContents();
  t.true(
    heads.some((h) => /^1 identity gains .* in acme\/payments: alice$/.test(h)),
    heads.join(' | '),
  );
  await c.noSeriousAxe(t, 'approve dialog');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
  const pending = await c.w.s.admin.get(`/iam/v2beta1/accessRequests?state=PENDING`);
  const asked = (
    pending.body.accessRequests as Array<{ uid: string; requesterUid: string; roleUid: string }>
  ).find((r) => r.requesterUid === alice && r.roleUid === editor);
  t.truthy(asked, 'cancel leaves it pending');
  const none = await c.w.s.admin.get(
    `/iam/v2beta1/roleBindings?identity=${encodeURIComponent(alice)}&role=${encodeURIComponent(editor)}`,
  );
  t.is(none.body.totalCount, '0', 'cancel makes no binding');

  await hers.getByRole('button', { name: 'Approve' }).click();
  await dialog.getByRole('button', { name: 'Yes, approve' }).click();
  await hers.waitFor({ state: 'detached' });
  t.is(await request(/alice asks for role editor/).count(), 0, 'gone from the pending inbox');
  // The message outlives the reload that dropped the request from the list.
  await page
    .getByRole('status')
    .filter({ hasText: 'Approved: alice gets editor at acme / payments.' })
    .waitFor();
  const done = await c.w.s.admin.get(`/iam/v2beta1/accessRequests/${asked?.uid ?? ''}`);
  t.is(done.body.state, 'APPROVED');
  const made = await c.w.s.admin.get(
    `/iam/v2beta1/roleBindings?identity=${encodeURIComponent(alice)}&role=${encodeURIComponent(editor)}`,
  );
  t.is(made.body.totalCount, '1', 'the binding is made');

  // The binding is there, on the group page, by names.
  await page.goto(`${c.w.s.url}/console/#/groups/${encodeURIComponent(payments)}/bindings`);
  const row = page
    .getByRole('table', { name: 'Role bindings' })
    .getByRole('row')
    .filter({ hasText: 'alice' })
    .filter({ hasText: 'editor' });
  await row.waitFor();
  t.is(await row.count(), 1);
  // And in the approved tab.
  await page.goto(`${c.w.s.url}/console/#/requests?state=APPROVED`);
  await page
    .getByRole('list', { name: 'Approved' })
    .getByRole('listitem')
    .filter({ hasText: /alice asks for role editor/ })
    .waitFor();
  t.deepEqual(
    (await buttons()).filter((x) => /^(Approve|Deny|Cancel request)/.test(x)),
    [],
    'a closed request offers nothing',
  );
});

test('deny asks first; nobody approves their own; a cancel asks first', async (t) => {
  const page = c.page;
  await c.signInWith(daveToken);
  await page.goto(`${c.w.s.url}/console/#/requests`);
  const pull = request(/alice asks for role registry.pull/);
  await pull.waitFor();
  await pull.getByRole('button', { name: 'Deny' }).click();
  const dialog = page.getByRole('dialog', { name: 'Deny this request?' });
  await dialog.waitFor();
  t.regex(
    (await dialog.textContent()) ?? '',
    /Denying refuses alice the role registry\.pull at acme \/ payments:/,
  );
  t.is(
    await page.evaluate('document.activeElement && document.activeElement.textContent'),
    'Yes, deny',
  );
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  t.is(await pull.count(), 1, 'Escape keeps it');
  await pull.getByRole('button', { name: 'Deny' }).click();
  await dialog.getByRole('button', { name: 'Yes, deny' }).click();
  await pull.waitFor({ state: 'detached' });
  const denied = await c.w.s.admin.get(`/iam/v2beta1/accessRequests?state=DENIED`);
  t.is(denied.body.accessRequests.length, 1);

  // dave, who could grant editor himself, asks for it: he is offered Cancel, not Approve.
  await ask('editor', 'to test');
  const own = request(/You ask for role editor/);
  await own.waitFor();
  await until(async () => (await own.getByRole('button').count()) > 0, 'his actions');
  t.is(await own.getByRole('button', { name: 'Approve' }).count(), 0);
  t.is(await own.getByRole('button', { name: 'Deny' }).count(), 0);
  // The API refuses it as well (hiding is a courtesy, never the guard).
  const listed = await c.w.s.client(daveToken).get(`/iam/v2beta1/accessRequests?state=PENDING`);
  const uid = (listed.body.accessRequests as Array<{ uid: string }>)[0]?.uid;
  const self = await c.w.s.client(daveToken).post('/iam/v2beta1/accessRequests:approve', { uid });
  t.is(self.status, 403);
  await own.getByRole('button', { name: 'Cancel request' }).click();
  const cancel = page.getByRole('dialog', { name: 'Cancel your request?' });
  await cancel.getByRole('button', { name: 'Yes, cancel it' }).click();
  await own.waitFor({ state: 'detached' });
  const after = await c.w.s.admin.get(`/iam/v2beta1/accessRequests/${uid}`);
  t.is(after.body.state, 'CANCELLED');
});

test('a viewer is offered no action on requests; axe at 1280 and 420 px', async (t) => {
  const page = c.page;
  // alice asks once more, so the approver's inbox has something to show.
  await c.signInWith(aliceToken);
  await page.goto(`${c.w.s.url}/console/#/requests`);
  await ask('editor', 'again');
  await c.signInWith(vicToken);
  await page.goto(`${c.w.s.url}/console/#/requests?state=all`);
  await page.getByRole('heading', { level: 2, name: 'Every request' }).waitFor();
  await page.getByText('0 requests').waitFor();
  t.deepEqual(
    (await buttons()).filter((x) => /^(Approve|Deny|Cancel request)/.test(x)),
    [],
  );
  await c.signInWith(daveToken);
  for (const width of [1280, 420]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${c.w.s.url}/console/#/requests`);
    await request(/alice asks for role editor/)
      .getByRole('button', { name: 'Approve' })
      .waitFor();
    const found = await axeSerious(page);
    t.deepEqual(
      found.map((v) => `${v.id} (${v.impact}): ${v.help}`),
      [],
      `axe on requests at ${width} px`,
    );
    const wide = (await page.evaluate('document.documentElement.scrollWidth')) as number;
    if (wide > width)
      t.log(
        await page.evaluate(
          `[...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > ${width}).slice(0, 8).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().width) + ' ' + (e.textContent ?? '').slice(0, 40))`,
        ),
      );
    t.true(wide <= width, `requests at ${width} px is ${wide} px wide`);
    await screenshot(page, `requests-${width}`);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
  t.deepEqual(c.b.incidents, []);
});

test('an approval that is not the last one says how many stand', async (t) => {
  const page = c.page;
  const policy = await c.w.s.admin.post('/iam/v2beta1/accessRequests:setPolicy', {
    groupUid: ledger,
    approvals: 2,
  });
  t.is(policy.status, 200);
  const asked = await c.w.s.client(aliceToken).post(`/iam/v2beta1/accessRequests/${ledger}`, {
    roleUid: viewer,
    durationSeconds: 3_600,
    reason: 'audit the ledger',
  });
  t.is(asked.status, 200);
  await c.signInWith(daveToken);
  await page.goto(`${c.w.s.url}/console/#/requests`);
  const hers = request(/alice asks for role viewer at acme \/ payments \/ ledger/);
  await hers.getByRole('button', { name: 'Approve' }).click();
  const dialog = page.getByRole('dialog', { name: 'Approve this request?' });
  t.regex(
    (await dialog.textContent()) ?? '',
    /for 1 hour from the approval\. This is approval 1 of 2: the binding is made at the last one\./,
  );
  await dialog.getByRole('button', { name: 'Yes, approve' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page
    .getByRole('status')
    .filter({ hasText: 'Approval recorded, 1 of 2: the binding is made at the last one.' })
    .waitFor();
  const after = await c.w.s.admin.get(`/iam/v2beta1/accessRequests/${asked.body.uid as string}`);
  t.is(after.body.state, 'PENDING');
  t.is(after.body.approvals.length, 1);
  await hers.filter({ hasText: '1 of 2 approvals' }).waitFor();
  t.deepEqual(c.b.incidents, []);
});

test('a folder owner approves, by names, a request at his folder by an identity of the organization', async (t) => {
  const page = c.page;
  // bob owns the folder payments and nothing at acme, where alice lives: he cannot read her.
  const bob = await createIdentity(c.w.s.admin, payments, 'bob', {
    issuer: c.w.issuer.url,
    subject: 'bob',
  });
  await createBinding(c.w.s.admin, payments, bob, await builtinRoleUid(c.w.s.admin, 'owner'));
  const bobToken = await c.w.tokenFor(bob, 'bob');
  const asBob = c.w.s.client(bobToken);
  t.is((await asBob.get(`/iam/v2beta1/identities/${alice}`)).status, 404, 'alice is not his');
  // The ledger's two-approval policy (the test above) back to one: bob's approval is the last.
  const policy = await c.w.s.admin.post('/iam/v2beta1/accessRequests:setPolicy', {
    groupUid: ledger,
    approvals: 1,
  });
  t.is(policy.status, 200);
  // Her editor at payments (the first test's approval) goes, so approving gives her access.
  const held = await c.w.s.admin.get(
    `/iam/v2beta1/roleBindings?identity=${encodeURIComponent(alice)}&role=${encodeURIComponent(editor)}`,
  );
  for (const b of held.body.roleBindings as Array<{ uid: string }>)
    t.is((await c.w.s.admin.delete(`/iam/v2beta1/roleBindings/${b.uid}`)).status, 200);
  const asked = await c.w.s.client(aliceToken).post(`/iam/v2beta1/accessRequests/${ledger}`, {
    roleUid: editor,
    durationSeconds: 8 * 3_600,
    reason: 'close the quarter',
  });
  t.is(asked.status, 200, JSON.stringify(asked.body));

  await c.signInWith(bobToken);
  await page.goto(`${c.w.s.url}/console/#/requests`);
  const hers = request(/alice asks for role editor at .*payments \/ ledger/);
  await hers.waitFor();
  const text = (await hers.textContent()) ?? '';
  // alice by her path from the organization (the request names her to the one who decides),
  // the role by name, the group as far as bob sees it; no uids.
  t.regex(text, /acme\/alice asks for role editor at … \/ payments \/ ledger for 8 hours/);
  t.regex(text, /close the quarter/);
  t.false(text.includes(alice), 'the requester by path, not uid');
  t.false(text.includes(editor), 'the role by name, not uid');
  // Her path is text, not a link to an identity page bob may not open.
  t.is(await hers.getByRole('link', { name: /alice/ }).count(), 0);

  await hers.getByRole('button', { name: 'Approve' }).click();
  const dialog = page.getByRole('dialog', { name: 'Approve this request?' });
  await dialog.waitFor();
  t.regex(
    (await dialog.textContent()) ?? '',
    /Approving grants acme\/alice the role editor at … \/ payments \/ ledger and everything below it, for 8 hours from the approval\./,
  );
  const region = dialog.getByRole('region', { name: 'What this changes' });
  await region.getByRole('heading', { name: 'What this changes to access' }).waitFor();
  const heads = await region.locator('.delta-lines > li .delta-head').allTextContents();
  t.true(
    heads.some((h) => /^1 identity gains .* in payments\/ledger: acme\/alice$/.test(h)),
    heads.join(' | '),
  );
  await c.noSeriousAxe(t, 'approve dialog of a folder owner');
  await dialog.getByRole('button', { name: 'Yes, approve' }).click();
  await hers.waitFor({ state: 'detached' });
  await page
    .getByRole('status')
    .filter({ hasText: 'Approved: acme/alice gets editor at … / payments / ledger.' })
    .waitFor();

  const done = await c.w.s.admin.get(`/iam/v2beta1/accessRequests/${asked.body.uid as string}`);
  t.is(done.body.state, 'APPROVED');
  const made = await c.w.s.admin.get(`/iam/v2beta1/roleBindings/${done.body.bindingUid as string}`);
  t.is(made.status, 200);
  t.is(made.body.identity.uid, alice);
  t.is(made.body.role.uid, editor);
  t.is(made.body.group.uid, ledger);
  // Deciding showed bob nothing else of alice: she is still not his to read or list.
  t.is((await asBob.get(`/iam/v2beta1/identities/${alice}`)).status, 404);
  const listed = await asBob.get(`/iam/v2beta1/identities`);
  t.false(JSON.stringify(listed.body).includes(alice));
  t.deepEqual(c.b.incidents, []);
});
