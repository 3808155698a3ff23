import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { runArbor, type CliRun } from '../helpers/cli-run.js';
import { createGroup } from '../helpers/fixtures.js';
import { createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';
import { ADMIN_TOKEN, startServer, type TestServer } from '../helpers/server.js';

/**
 * `arbor request`, `arbor approve`, `arbor deny`, `arbor requests list|get|cancel|policy`
 * as processes against a real Arbor (PGlite or PostgreSQL, by ARBOR_TEST_DB).
 */
let s: TestServer;
let home: string;
let org: string;
let asker: string;
let approver: string;

test.before(async () => {
  s = await startServer();
  home = mkdtempSync(join(tmpdir(), 'arbor-cli-requests-'));
  org = await createGroup(s.admin, 'cli-requests');
  const looker = await createRole(s.admin, org, 'looker', ['groups.list', 'roles.list']);
  const granter = await createRole(s.admin, org, 'granter', [
    'groups.list',
    'identity.list',
    'roles.list',
    'role_bindings.create',
  ]);
  await createRole(s.admin, org, 'reader', ['groups.list', 'identity.list']);
  const a = await createIdentity(s.admin, org, 'asker');
  const b = await createIdentity(s.admin, org, 'approver');
  await createBinding(s.admin, org, a, looker);
  await createBinding(s.admin, org, b, granter);
  asker = (await s.arbor.tokens.sign(a, { iss: 'https://x.example', sub: 'asker' })).token;
  approver = (await s.arbor.tokens.sign(b, { iss: 'https://x.example', sub: 'approver' })).token;
});
test.after.always(async () => {
  await s?.close();
  rmSync(home, { recursive: true, force: true });
});

function arbor(args: string[], token: string): Promise<CliRun> {
  return runArbor([...args, '--api', s.url], { HOME: home, ARBOR_TOKEN: token });
}

test.serial('request by role name, the inbox, approve; deny; cancel; policy', async (t) => {
  const policy = await arbor(
    ['requests', 'policy', '--group', 'cli-requests', '--approvals', '1', '--timeout', '2d'],
    ADMIN_TOKEN,
  );
  t.is(policy.code, 0, policy.stderr);
  t.regex(policy.stdout, /approvals: 1, timeout: 172800s/);

  const asked = await arbor(
    [
      'request',
      'reader',
      '--group',
      'cli-requests',
      '--for',
      '2h',
      '--reason',
      'deploy',
      '-o',
      'json',
    ],
    asker,
  );
  t.is(asked.code, 0, asked.stderr);
  const r = JSON.parse(asked.stdout) as { uid: string; durationSeconds: number; state: string };
  t.is(r.durationSeconds, 7200);
  t.is(r.state, 'PENDING');

  const inbox = await arbor(['requests', 'list', '--state', 'PENDING'], approver);
  t.is(inbox.code, 0, inbox.stderr);
  // One line a request: who asks, the role, where, for how long, from when, why, N of M, state.
  t.regex(
    inbox.stdout,
    /^REQUESTER\s+ROLE\s+GROUP\s+FOR\s+FROM\s+REASON\s+APPROVALS\s+STATE\s+UID$/m,
  );
  const line = inbox.stdout.split('\n').find((l) => l.includes(r.uid)) ?? '';
  t.regex(
    line,
    /^cli-requests\/asker\s+cli-requests\/reader\s+cli-requests\s+2h\s+approval\s+deploy\s+0 of 1\s+PENDING\s/,
  );
  const wide = await arbor(['requests', 'list', '--state', 'PENDING', '-o', 'wide'], approver);
  t.is(wide.code, 0, wide.stderr);
  t.regex(wide.stdout, /REQUESTER_UID\s+ROLE_UID\s+GROUP_UID\s+CREATED/);
  t.true(wide.stdout.includes(org), 'the group uid in -o wide');

  const shown = await arbor(['requests', 'show', r.uid], approver);
  t.is(shown.code, 0, shown.stderr);
  t.regex(
    shown.stdout,
    /^cli-requests\/asker asks for cli-requests\/reader in cli-requests for 2h/,
  );
  const own = await arbor(['approve', r.uid, '--yes'], asker);
  t.is(own.code, 6, 'PERMISSION_DENIED: not one’s own');
  // Without a terminal and without --yes: the request and its delta are shown, then refused.
  const unasked = await arbor(['approve', r.uid, '--reason', 'fine'], approver);
  t.is(unasked.code, 2, unasked.stderr);
  t.regex(
    unasked.stderr,
    /cli-requests\/asker asks for cli-requests\/reader in cli-requests for 2h from approval, because: deploy/,
  );
  t.regex(unasked.stderr, /approvals 0 of 1, PENDING/);
  t.regex(unasked.stderr, /Approving it would change access:\n {2}\S/);
  t.regex(unasked.stderr, /not a terminal: nothing was done; run again with --yes/);
  const ok = await arbor(['approve', r.uid, '--reason', 'fine', '--yes'], approver);
  t.is(ok.code, 0, ok.stderr);
  t.regex(ok.stdout, new RegExp(`${r.uid}: APPROVED \\(1/1 approvals, binding `));

  const second = JSON.parse(
    (
      await arbor(
        [
          'request',
          'reader',
          '--group',
          'cli-requests',
          '--for',
          '1h',
          '--reason',
          'x',
          '-o',
          'json',
        ],
        asker,
      )
    ).stdout,
  ) as { uid: string };
  const denied = await arbor(['deny', second.uid, '--reason', 'no', '--yes'], approver);
  t.regex(denied.stdout, /DENIED/);
  const third = JSON.parse(
    (
      await arbor(
        [
          'request',
          'reader',
          '--group',
          'cli-requests',
          '--for',
          '1h',
          '--reason',
          'y',
          '--from',
          '1h',
          '-o',
          'json',
        ],
        asker,
      )
    ).stdout,
  ) as { uid: string; notBefore?: string };
  t.truthy(third.notBefore);
  // One pending request per role and group: asking again names the one that waits (exit 5).
  const again = await arbor(
    ['request', 'reader', '--group', 'cli-requests', '--for', '1h', '--reason', 'z'],
    asker,
  );
  t.is(again.code, 5, again.stderr);
  t.true(again.stderr.includes(third.uid), again.stderr);
  const cancelled = await arbor(['requests', 'cancel', third.uid], asker);
  t.is(cancelled.code, 0, cancelled.stderr);
  t.regex(cancelled.stdout, /CANCELLED/);
  const got = await arbor(['requests', 'get', third.uid, '-o', 'json'], asker);
  t.is((JSON.parse(got.stdout) as { state: string }).state, 'CANCELLED');
});

test('requests policy: shown to whoever may list the group; set only with groups.update and role_bindings.create', async (t) => {
  const shown = await arbor(['requests', 'policy', '--group', 'cli-requests', '-o', 'json'], asker);
  t.is(shown.code, 0, shown.stderr);
  t.like(JSON.parse(shown.stdout), { approvals: 1 });
  // The approver may create bindings but not update the group; the asker may do neither.
  for (const token of [approver, asker]) {
    const refused = await arbor(
      ['requests', 'policy', '--group', 'cli-requests', '--approvals', '1'],
      token,
    );
    t.is(refused.code, 6, refused.stderr);
    t.regex(refused.stderr, /missing capability groups\.update/);
  }
  const typo = await arbor(
    ['requests', 'policy', '--group', 'cli-requests', '--approvals', 'two'],
    ADMIN_TOKEN,
  );
  t.is(typo.code, 2);
  t.regex(typo.stderr, /--approvals takes a whole number/);
  const tooMany = await arbor(
    ['requests', 'policy', '--group', 'cli-requests', '--approvals', '11'],
    ADMIN_TOKEN,
  );
  t.is(tooMany.code, 3, tooMany.stderr);
  t.regex(tooMany.stderr, /approvals must be at most 10/);
  const nowhere = await arbor(['requests', 'policy', '--group', 'no-such-org'], asker);
  t.is(nowhere.code, 4, nowhere.stderr);
});

test.serial(
  'an approver at a folder sees by path who asks from the organization, and for which role; a caller who may not approve does not',
  async (t) => {
    const folder = await createGroup(s.admin, 'folder', org);
    // The folder's owner may list and bind only at the folder, not the organization's identities.
    const owner = await createRole(s.admin, org, 'folder-owner', [
      'groups.list',
      'identity.list',
      'roles.list',
      'role_bindings.create',
    ]);
    // Sees the folder's requests (role_bindings.create) but could not grant `reader`.
    const binder = await createRole(s.admin, org, 'folder-binder', [
      'groups.list',
      'role_bindings.create',
    ]);
    const o = await createIdentity(s.admin, folder, 'owner');
    const b = await createIdentity(s.admin, folder, 'binder');
    await createBinding(s.admin, folder, o, owner);
    await createBinding(s.admin, folder, b, binder);
    const ownerToken = (await s.arbor.tokens.sign(o, { iss: 'https://x.example', sub: 'fo' }))
      .token;
    const binderToken = (await s.arbor.tokens.sign(b, { iss: 'https://x.example', sub: 'fb' }))
      .token;
    const asked = await arbor(
      [
        'request',
        'reader',
        '--group',
        'cli-requests/folder',
        '--for',
        '1h',
        '--reason',
        'docs',
        '-o',
        'json',
      ],
      asker,
    );
    t.is(asked.code, 0, asked.stderr);
    const { uid } = JSON.parse(asked.stdout) as { uid: string };
    type Seen = { requesterUid: string; requesterPath?: string; rolePath?: string };

    const got = await arbor(['requests', 'get', uid, '-o', 'json'], ownerToken);
    t.is(got.code, 0, got.stderr);
    const seen = JSON.parse(got.stdout) as Seen & Record<string, unknown>;
    t.is(seen.requesterPath, 'cli-requests/asker');
    t.is(seen.rolePath, 'cli-requests/reader');
    const listed = await arbor(['requests', 'list', '--state', 'PENDING'], ownerToken);
    t.is(listed.code, 0, listed.stderr);
    t.regex(listed.stdout, /^cli-requests\/asker\s+cli-requests\/reader\s+folder\s+1h\s/m);
    // Nothing else about the requester: the owner still cannot read or list it.
    const identity = await arbor(['identities', 'get', seen.requesterUid], ownerToken);
    t.not(identity.code, 0, 'the requester itself stays out of sight');
    const people = await arbor(
      ['identities', 'list', '--group', 'cli-requests', '-o', 'json'],
      ownerToken,
    );
    t.false(people.stdout.includes(seen.requesterUid));

    const other = await arbor(['requests', 'get', uid, '-o', 'json'], binderToken);
    t.is(other.code, 0, other.stderr);
    const unseen = JSON.parse(other.stdout) as Seen;
    t.is(unseen.requesterPath, undefined);
    t.is(unseen.rolePath, undefined);
    const page = await arbor(['requests', 'list', '--state', 'PENDING', '-o', 'json'], binderToken);
    t.is(page.code, 0, page.stderr);
    t.false(page.stdout.includes('cli-requests/asker'));

    t.is((await arbor(['requests', 'cancel', uid], asker)).code, 0);
  },
);

test.serial(
  'a folder owner lists and approves from the terminal a request at his folder by an identity of the organization',
  async (t) => {
    // acme/payments: bob owns the folder only; alice lives at acme and views payments.
    const acme = await createGroup(s.admin, 'acme');
    const payments = await createGroup(s.admin, 'payments', acme);
    const editor = await builtinRoleUid(s.admin, 'editor');
    const alice = await createIdentity(s.admin, acme, 'alice');
    const bob = await createIdentity(s.admin, payments, 'bob');
    await createBinding(s.admin, payments, alice, await builtinRoleUid(s.admin, 'viewer'));
    await createBinding(s.admin, payments, bob, await builtinRoleUid(s.admin, 'owner'));
    const sign = async (uid: string, sub: string) =>
      (await s.arbor.tokens.sign(uid, { iss: 'https://x.example', sub })).token;
    const [aliceToken, bobToken] = await Promise.all([sign(alice, 'alice'), sign(bob, 'bob')]);
    t.not((await arbor(['identities', 'get', alice], bobToken)).code, 0, 'alice is not his');

    const asked = await arbor(
      ['request', 'editor', '--group', payments, '--for', '8h', '--reason', 'close the quarter'],
      aliceToken,
    );
    t.is(asked.code, 0, asked.stderr);
    const uid = /^requested: (\S+) /.exec(asked.stdout)?.[1] ?? '';
    t.truthy(uid, asked.stdout);

    // His inbox names alice by her path from the organization, the role, and the group from
    // where his view starts; uids only in -o wide.
    const inbox = await arbor(['requests', 'list', '--state', 'PENDING'], bobToken);
    t.is(inbox.code, 0, inbox.stderr);
    const line = inbox.stdout.split('\n').find((l) => l.includes(uid)) ?? '';
    t.regex(
      line,
      /^acme\/alice\s+editor\s+payments\s+8h\s+approval\s+close the quarter\s+0 of 1\s+PENDING\s/,
      inbox.stdout,
    );
    t.false(line.includes(alice), 'alice by path, not uid');
    t.false(line.includes(editor), 'the role by name, not uid');

    // Approving shows the request and what it grants, then does it.
    const ok = await arbor(['approve', uid, '--reason', 'quarter end', '--yes'], bobToken);
    t.is(ok.code, 0, ok.stderr);
    t.regex(
      ok.stderr,
      /^acme\/alice asks for editor in payments for 8h from approval, because: close the quarter \(approvals 0 of 1, PENDING\)/,
    );
    // The one who gains, by the path the request names her with: he may not list her.
    t.regex(
      ok.stderr,
      /Approving it would change access:\n {2}acme\/alice gains \d+ capabilities in payments\n/,
    );
    t.false(ok.stderr.includes(alice), ok.stderr);
    const done = new RegExp(`^${uid}: APPROVED \\(1/1 approvals, binding (\\S+)\\)$`, 'm').exec(
      ok.stdout,
    );
    t.truthy(done, ok.stdout);
    const binding = await s.admin.get(`/iam/v2beta1/roleBindings/${done?.[1] ?? ''}`);
    t.is(binding.status, 200);
    t.is(binding.body.identity.uid, alice);
    t.is(binding.body.role.uid, editor);
    t.is(binding.body.group.uid, payments);
    const state = await arbor(['requests', 'get', uid, '-o', 'json'], aliceToken);
    t.is((JSON.parse(state.stdout) as { state: string }).state, 'APPROVED');

    // Nothing else about alice came into his sight.
    t.not((await arbor(['identities', 'get', alice], bobToken)).code, 0);
    const people = await arbor(['identities', 'list', '--group', acme, '-o', 'json'], bobToken);
    t.false(people.stdout.includes(alice), 'alice is not among what he may list');
  },
);
