import test from 'ava';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { allPages, createGroup } from '../helpers/fixtures.js';
import { ISSUER, createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * `within` on the audit list: one timeline for a group and everything below it,
 * where `uidp.descendants_of` leaves the group itself out; never past the caller's view.
 */
const AUDIT = '/audit/v2beta1/events';
let s: TestServer;
let org: string;
let team: string;
let child: string;
let grand: string;
let sibling: string;

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'within-org');
  team = await createGroup(s.admin, 'team', org);
  child = await createGroup(s.admin, 'child', team);
  grand = await createGroup(s.admin, 'grand', child);
  sibling = await createGroup(s.admin, 'teammate', org);
  await s.admin.patch(`/iam/v2beta1/groups/${team}`, { description: 'renamed' });
});
test.after.always(async () => {
  await s?.close();
});

const uidsOf = async (token: string | undefined, q: string) =>
  new Set(
    (
      await allPages<{ resourceUid: string }>(
        token ? s.client(token) : s.admin,
        `${AUDIT}?${q}`,
        'events',
      )
    )
      .flat()
      .map((e) => e.resourceUid),
  );

test('within: the group itself and everything below it, nothing beside or above', async (t) => {
  const got = await uidsOf(undefined, `within=${team}&page_size=200`);
  t.true(got.has(team));
  t.true(got.has(child));
  t.true(got.has(grand));
  t.false(got.has(sibling));
  t.false(got.has(org));
  // descendants_of, for comparison, leaves the group out.
  const below = await uidsOf(undefined, `uidp.descendants_of=${team}&page_size=200`);
  t.false(below.has(team));
  // Combined with other filters, as any filter is.
  const updates = await s.admin.get(`${AUDIT}?within=${team}&operation=update`);
  t.deepEqual(
    updates.body.events.map((e: { resourceUid: string }) => e.resourceUid),
    [team],
  );
  const bad = await s.admin.get(`${AUDIT}?within=not-a-uid`);
  t.is(bad.status, 400);
});

test('within: a caller sees only its own part of the subtree', async (t) => {
  const owner = await createIdentity(s.admin, org, 'child-owner');
  await createBinding(s.admin, child, owner, builtinRoleUid('owner'));
  const { token } = await s.arbor.tokens.sign(owner, { iss: ISSUER, sub: `sub-${owner}` });
  const got = await uidsOf(token, `within=${team}&page_size=200`);
  t.true(got.has(child));
  t.true(got.has(grand));
  t.false(got.has(team));
  t.false(got.has(sibling));
});
