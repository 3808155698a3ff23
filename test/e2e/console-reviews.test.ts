import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { consoleTest } from '../helpers/console-test.js';

/**
 * The console's access reviews (the group page's Reviews tab), in Chromium: a team's owner
 * opens a review, sees each binding with its holder, role and last use, removes one with a
 * reason (the binding is gone afterwards, through the API), and is refused deciding its own;
 * a viewer is offered no way to open one. axe on the populated tab.
 */
const c = consoleTest();
const test = c.test;

let team: string;
let ownerToken: string;
let viewerToken: string;
let botBinding: string;

test.before(async () => {
  const acme = await createGroup(c.w.s.admin, 'acme');
  team = await createGroup(c.w.s.admin, 'team', acme);
  const owner = await builtinRoleUid(c.w.s.admin, 'owner');
  const viewer = await builtinRoleUid(c.w.s.admin, 'viewer');
  const person = async (name: string) =>
    createIdentity(c.w.s.admin, acme, name, { issuer: c.w.issuer.url, subject: name });
  const olga = await person('olga');
  const vic = await person('vic');
  const bot = await person('deploy-bot');
  await createBinding(c.w.s.admin, team, olga, owner);
  await createBinding(c.w.s.admin, team, vic, viewer);
  botBinding = await createBinding(c.w.s.admin, team, bot, viewer);
  ownerToken = await c.w.tokenFor(olga, 'olga');
  viewerToken = await c.w.tokenFor(vic, 'vic');
});

test('an owner opens a review, removes a binding with a reason, may not decide its own', async (t) => {
  const page = c.page;
  await c.signInWith(ownerToken);
  await page.goto(c.groupUrl(team, 'reviews'));
  const form = page.getByRole('form', { name: 'Open a review' });
  await form.getByLabel('Due in days').fill('7');
  await form.getByRole('button', { name: 'Open a review' }).click();
  await page.getByRole('button', { name: 'Show items' }).first().click();
  const row = page.getByRole('row').filter({ hasText: 'deploy-bot' });
  await row.getByText('never').waitFor();
  await row.getByLabel('Reason for deploy-bot as viewer').fill('left the team');
  await row.getByRole('button', { name: 'Remove' }).click();
  await row.getByText('remove: left the team').waitFor();
  t.is((await c.w.s.admin.get(`/iam/v2beta1/roleBindings/${botBinding}`)).status, 404);
  // Its own binding: the API refuses, and the refusal is shown.
  const own = page.getByRole('row').filter({ hasText: 'olga' });
  await own.getByLabel('Reason for olga as owner').fill('mine');
  await own.getByRole('button', { name: 'Keep' }).click();
  await own
    .getByText(/PERMISSION_DENIED|nobody reviews their own access/)
    .first()
    .waitFor();
  await c.noSeriousAxe(t, 'reviews');

  await c.signInWith(viewerToken);
  await page.goto(c.groupUrl(team, 'reviews'));
  await page.getByRole('heading', { name: 'Access reviews' }).waitFor();
  t.is(await page.getByRole('form', { name: 'Open a review' }).count(), 0);
});
