import test from 'ava';
import { createGroup } from '../helpers/fixtures.js';
import { createIdentity, createRole, ISSUER } from '../helpers/iam-fixtures.js';
import { TEST_BACKEND } from '../helpers/db.js';
import { startServer, type Client, type TestServer } from '../helpers/server.js';

/**
 * A conditional decision's group path is remembered across requests where a change feed
 * vouches for it (PostgreSQL: read-caches.ts), and on PGlite, which only this process
 * writes, until its next transaction (db/generation-cache.ts). Either way a rename of the
 * group, or of any group above it, decides the very next request by the new path: a
 * remembered path never outlives the change.
 */
let s: TestServer;
let org: string;
let payments: string;
let team: string;
let reader: string;
const G = '/iam/v2beta1/groups';

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'cg-org');
  payments = await createGroup(s.admin, 'payments', org);
  team = await createGroup(s.admin, 'team', payments);
  reader = await createRole(s.admin, org, 'reader', ['groups.list']);
  // On PostgreSQL, wait for the change feed to vouch: then the cache serves, and is tested.
  const deadline = Date.now() + 10_000;
  while (s.db.changeFeed && !s.db.changeFeed.fresh() && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
});
test.after.always(() => s?.close());

async function boundTo(name: string, expression: string): Promise<Client> {
  const id = await createIdentity(s.admin, org, name);
  const r = await s.admin.post(`/iam/v2beta1/roleBindings/${org}`, {
    identityUid: id,
    roleUid: reader,
    condition: { expression },
  });
  if (r.status !== 200) throw new Error(`bind ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  return s.client((await s.arbor.tokens.sign(id, { iss: ISSUER, sub: `sub-${name}` })).token);
}

test.serial('a renamed ancestor group decides the next request by its new path', async (t) => {
  const payers = await boundTo('payers', 'resource.group.path.startsWith("cg-org/payments/")');
  const billers = await boundTo('billers', 'resource.group.path.startsWith("cg-org/billing/")');
  const stats = s.arbor.readCaches.condition_groups;
  const hitsBefore = stats?.hits ?? 0;
  for (let i = 0; i < 3; i++) {
    t.is((await payers.get(`${G}/${team}`)).status, 200, 'under payments: granted');
    t.is((await billers.get(`${G}/${team}`)).status, 404, 'not under billing: denied');
  }
  // Remembered where a feed vouches, and on PGlite (written by this process alone) until
  // its next transaction: the cache is in play, and the renames below must get past it.
  if (TEST_BACKEND === 'pglite' || s.db.changeFeed?.fresh())
    t.true((stats?.hits ?? 0) > hitsBefore, 'the path was remembered (the cache is in play)');

  t.is((await s.admin.patch(`${G}/${payments}`, { name: 'billing' })).status, 200);
  t.is((await payers.get(`${G}/${team}`)).status, 404, 'the old path no longer grants');
  t.is((await billers.get(`${G}/${team}`)).status, 200, 'the new path grants at once');

  // And back: the paths remembered since the first rename go too.
  t.is((await billers.get(`${G}/${team}`)).status, 200);
  t.is((await s.admin.patch(`${G}/${payments}`, { name: 'payments' })).status, 200);
  t.is((await billers.get(`${G}/${team}`)).status, 404);
  t.is((await payers.get(`${G}/${team}`)).status, 200);
});

test.serial(
  'a renamed group itself decides by its new path, and a new group by its own',
  async (t) => {
    const teams = await boundTo('teams', 'resource.group.path.endsWith("/team")');
    t.is((await teams.get(`${G}/${team}`)).status, 200);
    t.is((await teams.get(`${G}/${team}`)).status, 200);
    t.is((await s.admin.patch(`${G}/${team}`, { name: 'squad' })).status, 200);
    t.is((await teams.get(`${G}/${team}`)).status, 404, 'renamed: /squad no longer ends in /team');
    const other = await createGroup(s.admin, 'team', org);
    t.is((await teams.get(`${G}/${other}`)).status, 200, 'a new group is found by its own path');
    t.is((await s.admin.delete(`${G}/${other}`)).status, 200);
    t.is((await teams.get(`${G}/${other}`)).status, 404, 'a deleted group grants nothing');
  },
);
