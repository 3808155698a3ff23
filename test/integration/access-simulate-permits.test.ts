import test from 'ava';
import { ADMIN, type Principal } from '../../src/auth/principal.js';
import { Code } from '../../src/core/rpc-code.js';
import type { RpcError } from '../../src/core/rpc-error.js';
import type { ChangeVerdict } from '../../src/resources/access/simulate.js';
import { builtinRoleUid } from '../../src/resources/roles/builtin-roles.js';
import { createGroup } from '../helpers/fixtures.js';
import { asIdentity, createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * A simulated verdict is the real call's own decision: `permitted` holds exactly when the
 * real call, made next, succeeds. Two cases where a restatement of the services' checks
 * said yes and the real call said no: an identity whose scheduled (not yet started) binding
 * grants what the caller does not hold, and objects a Kubernetes resource manages.
 */
let s: TestServer;
let org: string;
let folder: string;
let carol: string;
const MANAGER = 'default/RoleBinding/team-a';

test.before(async () => {
  s = await startServer();
  org = await createGroup(s.admin, 'permits-org');
  folder = await createGroup(s.admin, 'folder', org);
  carol = await createIdentity(s.admin, org, 'carol');
  // carol owns the folder, and nothing above it.
  await createBinding(s.admin, folder, carol, builtinRoleUid('owner'));
});
test.after.always(async () => {
  await s?.close();
});

async function verdict(p: Principal, change: unknown): Promise<ChangeVerdict> {
  const a = await s.arbor.services.accessSimulator.simulate(p, { changes: [change] });
  return a.changes[0]!;
}

async function codeOf(call: Promise<unknown>): Promise<number | 'ok'> {
  try {
    await call;
    return 'ok';
  } catch (e) {
    return (e as RpcError).code;
  }
}

const manage = (table: string, uid: string) =>
  s.db.knex(table).where({ uid }).update({ managed_by: MANAGER });

test.serial(
  'deleteIdentity with a scheduled binding the caller could not grant is not permitted, as the real delete refuses',
  async (t) => {
    const victim = await createIdentity(s.admin, folder, 'victim');
    const notBefore = new Date(Date.now() + 3_600_000).toISOString();
    // Bound as owner of the whole organization, from an hour from now.
    await s.arbor.services.roleBindings.create(ADMIN, org, {
      identityUid: victim,
      roleUid: builtinRoleUid('owner'),
      notBefore,
    });
    const v = await verdict(asIdentity(carol), { deleteIdentity: { uid: victim } });
    t.true(v.applied);
    t.false(v.permitted, JSON.stringify(v));
    t.is(
      await codeOf(s.arbor.services.identities.delete(asIdentity(carol), victim)),
      Code.PERMISSION_DENIED,
    );
  },
);

test.serial(
  'deleteRoleBinding of a binding a Kubernetes object manages is not permitted, even as the admin',
  async (t) => {
    const who = await createIdentity(s.admin, folder, 'managed-holder');
    const b = await createBinding(s.admin, folder, who, builtinRoleUid('viewer'));
    await manage('role_bindings', b);
    const v = await verdict(ADMIN, { deleteRoleBinding: { uid: b } });
    t.true(v.applied);
    t.false(v.permitted, JSON.stringify(v));
    t.regex(v.reason ?? '', /managed by the Kubernetes object/);
    t.is(await codeOf(s.arbor.services.roleBindings.delete(ADMIN, b)), Code.FAILED_PRECONDITION);
    // On behalf of the managing object itself, both say yes.
    const manager: Principal = { kind: 'identity', uid: carol, manager: MANAGER };
    t.true((await verdict(manager, { deleteRoleBinding: { uid: b } })).permitted);
    t.is(await codeOf(s.arbor.services.roleBindings.delete(manager, b)), 'ok');
  },
);

test.serial(
  'deleteIdentity of a managed identity is not permitted, as the real delete refuses',
  async (t) => {
    const who = await createIdentity(s.admin, folder, 'managed-identity');
    await manage('identities', who);
    const v = await verdict(ADMIN, { deleteIdentity: { uid: who } });
    t.false(v.permitted, JSON.stringify(v));
    t.is(await codeOf(s.arbor.services.identities.delete(ADMIN, who)), Code.FAILED_PRECONDITION);
  },
);

test.serial(
  'deleteGroup is not permitted when the group or what it carries is managed',
  async (t) => {
    const g = await createGroup(s.admin, 'managed-group', folder);
    await manage('groups', g);
    t.false((await verdict(ADMIN, { deleteGroup: { uid: g } })).permitted);
    t.is(await codeOf(s.arbor.services.groups.delete(ADMIN, g)), Code.FAILED_PRECONDITION);
    // A cascade that would delete a managed binding below is refused too.
    const h = await createGroup(s.admin, 'carrier', folder);
    const who = await createIdentity(s.admin, h, 'carried');
    const b = await createBinding(s.admin, h, who, builtinRoleUid('viewer'));
    t.true((await verdict(ADMIN, { deleteGroup: { uid: h } })).permitted);
    await manage('role_bindings', b);
    t.false((await verdict(ADMIN, { deleteGroup: { uid: h } })).permitted);
  },
);

test.serial(
  'a custom role below the root cannot be bound above it (placement), nor granted by one who lacks it',
  async (t) => {
    const role = await createRole(s.admin, folder, 'folder-reader', ['repo.list']);
    const v = await verdict(ADMIN, {
      createRoleBinding: { groupUid: org, identityUid: carol, roleUid: role },
    });
    t.false(v.applied);
    t.regex(v.reason ?? '', /defined at the binding's group or above/);
    // carol owns the folder: she may bind it there, not a role granting what she lacks.
    const wide = await createRole(s.admin, org, 'org-wide', ['groups.create', 'repo.list']);
    const w = await verdict(asIdentity(carol), {
      createRoleBinding: { groupUid: folder, identityUid: carol, roleUid: wide },
    });
    const real = await codeOf(
      s.arbor.services.roleBindings.create(asIdentity(carol), folder, {
        identityUid: carol,
        roleUid: wide,
      }),
    );
    t.is(w.permitted, real === 'ok', `${JSON.stringify(w)} / ${real}`);
  },
);
