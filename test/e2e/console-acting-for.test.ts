import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { screenshot } from '../helpers/browser.js';
import { consoleTest, namedText } from '../helpers/console-test.js';
import { pick } from '../helpers/picker.js';

/**
 * "As X for Y" in the console, in a real Chromium against a real Arbor: signed in with a
 * delegated token (an agent acting for pat, made at the standard token endpoint with an
 * `actor_token`), the access view says for whom the token acts, through whom, and what it
 * may use; a check says whether the asked capability is within that, so a person reading
 * "Denied" knows it is the token's scope, not pat's bindings, that refuses.
 */
const c = consoleTest();
const test = c.test;
const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS = 'urn:ietf:params:oauth:token-type:access_token';

let org: string;
let pat: string;
let delegated: string;
let patToken: string;

test.before(async () => {
  const admin = c.w.s.admin;
  org = await createGroup(admin, 'delegating');
  pat = await createIdentity(admin, org, 'pat', { issuer: c.w.issuer.url, subject: 'pat' });
  const agent = await createIdentity(admin, org, 'agent', {
    issuer: c.w.issuer.url,
    subject: 'agent',
  });
  // pat may edit the organization; what pat lets the agent use is narrower.
  await createBinding(admin, org, pat, await builtinRoleUid(admin, 'editor'));
  const policy = await admin.post('/iam/v2beta1/identities:setDelegationPolicy', {
    identityUid: pat,
    actors: [agent],
    capabilities: ['groups.list', 'identity.list', 'role_bindings.list', 'roles.list'],
  });
  if (policy.status !== 200) throw new Error(`policy: ${JSON.stringify(policy.body)}`);
  const form = new URLSearchParams({
    grant_type: EXCHANGE,
    subject_token: (patToken = await c.w.tokenFor(pat, 'pat')),
    subject_token_type: ACCESS,
    actor_token: await c.w.tokenFor(agent, 'agent'),
    actor_token_type: ACCESS,
  });
  const res = await fetch(`${c.w.s.url}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  const body = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !body.access_token)
    throw new Error(`exchange: ${res.status} ${JSON.stringify(body)}`);
  delegated = body.access_token;
});

/** Signs in with `token`, opens the access view about pat; @returns the header's words. */
async function accessAs(token: string): Promise<string> {
  await c.signInWith(token);
  await c.page.goto(`${c.w.s.url}/console/#/access?identity=${encodeURIComponent(pat)}`);
  await c.page.getByRole('heading', { level: 1, name: 'Access' }).waitFor();
  return namedText(c.page.locator('header .who'));
}

test('signed in as an agent for pat: the check and what-can say so, and what is out of scope', async (t) => {
  const page = c.page;
  // The header names the subject and, beside it, the agent acting through the token.
  const who = await accessAs(delegated);
  t.regex(who, /Signed in as pat, through agent/);

  // What-can: pat's grants, with the token's own bound above them.
  const whatCan = page.getByRole('region', { name: 'What can an identity do?' });
  const note = whatCan.getByRole('note');
  const said = await namedText(note);
  t.regex(
    said,
    /As agent for pat: this token may use only groups\.list identity\.list role_bindings\.list roles\.list\./,
  );
  await whatCan.getByRole('table', { name: 'What the identity can do' }).waitFor();

  const check = page.getByRole('region', { name: 'Check, with the reason' });
  const ask = async (capability: string): Promise<string> => {
    await pick(page, check, 'Capability', capability.slice(0, 9), capability);
    await pick(page, check, 'Group', 'deleg', 'delegating');
    await check.getByRole('button', { name: 'Check' }).click();
    const answer = check.locator('.check-answer');
    await answer.getByRole('note').waitFor();
    return namedText(answer);
  };
  await pick(page, check, 'Identity', 'pa', 'pat');
  // Within the token's scope, and held by pat: allowed, through the agent.
  const listed = await ask('groups.list');
  t.regex(listed, /Allowed: pat may groups\.list in delegating/);
  t.regex(listed, /As agent for pat: .*; groups\.list is among them\./);
  await c.noSeriousAxe(t, 'access, acting for');
  await screenshot(page, 'access-acting-for');

  // pat holds groups.update (editor); the token may not use it: the note says whose limit.
  const update = await ask('groups.update');
  t.regex(
    update,
    /As agent for pat: .*; groups\.update is not among them, whatever the bindings say\./,
  );
  t.deepEqual(c.b.incidents, []);
});

test('signed in with pat’s own token: no actor is named, though every API token carries act', async (t) => {
  const page = c.page;
  const who = await accessAs(patToken);
  t.regex(who, /Signed in as pat/);
  t.false(who.includes('through'), who);
  const whatCan = page.getByRole('region', { name: 'What can an identity do?' });
  await whatCan.getByRole('table', { name: 'What the identity can do' }).waitFor();
  t.is(await whatCan.getByRole('note').count(), 0, 'no "As … for …" for a token of its own');
  await c.noSeriousAxe(t, 'access, own token');
  t.deepEqual(c.b.incidents, []);
});
