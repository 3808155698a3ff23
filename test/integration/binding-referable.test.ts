import test from 'ava';
import { RoleBindingsService } from '../../src/gen/arbor/iam/v2beta1/role_bindings_pb.js';
import { createGroup } from '../helpers/fixtures.js';
import { ISSUER, asIdentity, createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import { startGrpcServer, type GrpcTestServer } from '../helpers/grpc-server.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import type { Client } from '../helpers/server.js';

/**
 * A folder owner's direct bind of an identity of the organization (docs/access-requests.md,
 * "Approvers across a tree"): an identity already bound at a group where the caller may
 * bind, by a binding the caller may list, is referable by uid for a new binding there, on
 * REST and gRPC alike, and access:simulate says so too. Nothing else about it becomes
 * visible, and an identity with no such binding is refused exactly as a missing uid is.
 */
let s: GrpcTestServer;
let org: string;
let platform: string;
let ci: string;
let bob: string;
let asBob: Client;
let viewer: string;
let editor: string;
/** Lives at the organization; bound at `ci` by the admin (Bob sees that binding). */
let held: string;
/** Lives at the organization; bound at the organization only (Bob sees none of it). */
let stranger: string;
/** A well-formed identity uid under the organization that names nothing. */
let missing: string;

const RB = '/iam/v2beta1/roleBindings';

test.before(async () => {
  s = await startGrpcServer();
  org = await createGroup(s.admin, 'referable-org');
  platform = await createGroup(s.admin, 'platform', org);
  ci = await createGroup(s.admin, 'ci', platform);
  viewer = await builtinRoleUid(s.admin, 'viewer');
  editor = await builtinRoleUid(s.admin, 'editor');
  bob = await createIdentity(s.admin, platform, 'bob');
  await createBinding(s.admin, platform, bob, await builtinRoleUid(s.admin, 'owner'));
  asBob = s.client((await s.arbor.tokens.sign(bob, { iss: ISSUER, sub: 'sub-bob' })).token);
  held = await createIdentity(s.admin, org, 'held');
  await createBinding(s.admin, ci, held, viewer);
  stranger = await createIdentity(s.admin, org, 'stranger');
  await createBinding(s.admin, org, stranger, viewer);
  missing = `${org}/00000000000000ab`;
});
test.after.always(async () => {
  await s?.close();
});

/** The body with one uid written as another, to compare two refusals byte for byte. */
const as = (body: unknown, uid: string, by: string) =>
  JSON.stringify(body)
    .replaceAll(uid, by)
    .replace(/"requestId":"[^"]*"/g, '');

test.serial(
  'a folder owner binds over REST an identity of the organization already bound in its folder',
  async (t) => {
    t.is((await asBob.get(`/iam/v2beta1/identities/${held}`)).status, 404, 'Bob cannot list it');
    const made = await asBob.post(`${RB}/${platform}`, { identityUid: held, roleUid: viewer });
    t.is(made.status, 200, JSON.stringify(made.body));
    t.is(made.body.identity.uid, held);
    t.is(made.body.group.uid, platform);
    // The answer shows the identity by uid only: binding it made nothing else visible.
    t.is(made.body.identity.name, '');
    t.is(made.body.identity.subject, '');
    t.is((await asBob.get(`/iam/v2beta1/identities/${held}`)).status, 404);
    const listed = await asBob.get(`/iam/v2beta1/identities?uidp.descendants_of=${org}`);
    t.false(JSON.stringify(listed.body).includes(held));
  },
);

test.serial('the same bind over gRPC, at a group below the folder', async (t) => {
  const g = s.grpc((await s.arbor.tokens.sign(bob, { iss: ISSUER, sub: 'sub-bob' })).token);
  try {
    const made = await g.call(RoleBindingsService, 'CreateRoleBinding', {
      parent: ci,
      roleBinding: { identityUid: held, roleUid: editor },
    });
    t.true(made.ok, JSON.stringify(made));
    if (made.ok) t.is(made.json.identity.uid, held);
    const refused = await g.call(RoleBindingsService, 'CreateRoleBinding', {
      parent: ci,
      roleBinding: { identityUid: stranger, roleUid: editor },
    });
    const none = await g.call(RoleBindingsService, 'CreateRoleBinding', {
      parent: ci,
      roleBinding: { identityUid: missing, roleUid: editor },
    });
    t.is(refused.code, 3);
    t.is(none.code, 3);
    if (!refused.ok && !none.ok) {
      t.regex(refused.message, /identity not found/);
      t.is(as(refused.status, stranger, 'X'), as(none.status, missing, 'X'));
    }
  } finally {
    g.close();
  }
});

test.serial(
  'an identity with no binding the owner may see is refused as a missing uid is',
  async (t) => {
    const refused = await asBob.post(`${RB}/${platform}`, {
      identityUid: stranger,
      roleUid: viewer,
    });
    const none = await asBob.post(`${RB}/${platform}`, { identityUid: missing, roleUid: viewer });
    t.is(refused.status, 400);
    t.regex(refused.body.message, /identity not found/);
    t.is(none.status, 400);
    t.is(as(refused.body, stranger, 'X'), as(none.body, missing, 'X'), 'no oracle');
    // Nor does a binding Bob may see but not make (above its folder) make one referable:
    // the stranger's binding is at the organization, where Bob may not bind.
    const sim = await s.arbor.services.accessSimulator.simulate(asIdentity(bob), {
      changes: [
        { createRoleBinding: { groupUid: platform, identityUid: stranger, roleUid: viewer } },
        { createRoleBinding: { groupUid: platform, identityUid: missing, roleUid: viewer } },
      ],
    });
    t.deepEqual(
      sim.changes.map((c) => [c.applied, c.permitted, c.reason]),
      [
        [false, false, 'identity not found'],
        [false, false, 'identity not found'],
      ],
    );
  },
);

test.serial('access:simulate agrees with the real create, change by change', async (t) => {
  // `once` holds a single binding Bob may see; a set that deletes it first cannot bind it.
  const once = await createIdentity(s.admin, org, 'once');
  const only = await createBinding(s.admin, ci, once, viewer);
  const bind = { createRoleBinding: { groupUid: platform, identityUid: once, roleUid: viewer } };
  const first = await s.arbor.services.accessSimulator.simulate(asIdentity(bob), {
    changes: [bind],
  });
  t.like(first.changes[0], { applied: true, permitted: true });
  const afterDelete = await s.arbor.services.accessSimulator.simulate(asIdentity(bob), {
    changes: [{ deleteRoleBinding: { uid: only } }, bind],
  });
  t.deepEqual(
    afterDelete.changes.map((c) => [c.applied, c.permitted]),
    [
      [true, true],
      [false, false],
    ],
  );
  t.is(afterDelete.changes[1]!.reason, 'identity not found');
  // For real, in the same order: the delete, then the bind is refused as predicted.
  t.is((await asBob.delete(`${RB}/${only}`)).status, 200);
  const refused = await asBob.post(`${RB}/${platform}`, {
    identityUid: once,
    roleUid: viewer,
  });
  t.is(refused.status, 400);
  t.regex(refused.body.message, /identity not found/);
});
