import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { runArbor, type CliRun } from '../helpers/cli-run.js';
import { ADMIN_TOKEN, must, startServer, type TestServer } from '../helpers/server.js';

/**
 * `arbor apply` applies what was reviewed or nothing: a role or identity the plan binds
 * that changed after the review, and a plan file changed after it was written, stop it
 * (a live server, the CLI as a process).
 */

let server: TestServer;
let home: string;
let dir: string;
let org: string;
let platform: string;

function arbor(args: string[]): Promise<CliRun> {
  return runArbor(args, { HOME: home, ARBOR_API_URL: server.url, ARBOR_ADMIN_TOKEN: ADMIN_TOKEN });
}

type Json = Record<string, any>;

/** The group and identity as they exist (in sync), and `extra`: one more manifest. */
function manifests(extra = ''): void {
  writeFileSync(
    join(dir, 'tree.yaml'),
    `apiVersion: arbor.dev/v1alpha1
kind: Group
metadata: { name: platform, namespace: team-a }
spec: { parentUid: ${org}, description: the platform team }
---
apiVersion: arbor.dev/v1alpha1
kind: Identity
metadata: { name: ci, namespace: team-a }
spec:
  groupRef: { name: platform }
  claimMatch: { issuer: 'https://ci.example', subject: 'repo:acme/platform' }
${extra}`,
  );
}

async function children(kind: 'roleBindings', of: string): Promise<Json[]> {
  const page = await must(
    kind,
    server.api.GET('/iam/v2beta1/roleBindings', {
      params: { query: { 'uidp.children_of': of } },
    }),
  );
  return (page as unknown as Record<string, Json[]>)[kind]!;
}

test.before(async () => {
  server = await startServer();
  home = mkdtempSync(join(tmpdir(), 'arbor-plan-review-'));
  dir = join(home, 'manifests');
  mkdirSync(dir);
  org = (await must('org', server.api.POST('/iam/v2beta1/groups', { body: { name: 'acme' } }))).uid;
  platform = (
    await must(
      'platform',
      server.api.POST('/iam/v2beta1/groups/{uid}', {
        params: { path: { uid: org } },
        body: { name: 'platform', description: 'the platform team' },
      }),
    )
  ).uid;
  await must(
    'ci',
    server.api.POST('/iam/v2beta1/identities/{uid}', {
      params: { path: { uid: platform } },
      body: {
        name: 'ci',
        claimMatch: { issuer: 'https://ci.example', subject: 'repo:acme/platform' },
      },
    }),
  );
});

test.after.always(async () => {
  await server?.close();
  rmSync(home, { recursive: true, force: true });
});

/** Plans `extra` (one more RoleBinding manifest) to a file; its token and the file's path. */
async function savedPlan(extra: string): Promise<{ file: string; token: string; out: CliRun }> {
  manifests(extra);
  const file = join(home, 'reviewed.json');
  const out = await arbor(['plan', '-f', dir, '--out', file]);
  const token = /Plan token: (\S+)/.exec(out.stdout)?.[1] ?? '';
  return { file, token, out };
}

test.serial(
  'apply refuses a reviewed plan once a role it binds was widened: exit 5, the role named, nothing applied',
  async (t) => {
    const role = await must(
      'role',
      server.api.POST('/iam/v2beta1/roles/{uid}', {
        params: { path: { uid: org } },
        body: { name: 'lister', capabilities: ['repo.list'] },
      }),
    );
    const { file, token, out } = await savedPlan(`---
apiVersion: arbor.dev/v1alpha1
kind: RoleBinding
metadata: { name: ci-lister, namespace: team-a }
spec: { groupRef: { name: platform }, identityRef: { name: ci }, role: lister }
`);
    t.is(out.code, 2, out.stderr);
    t.regex(out.stdout, /\+ ci gains repo\.list in acme\/platform\n/);
    t.notRegex(out.stdout, /gains repo\.delete/);
    // Widened after the review: the plan's own writes are the same, what they grant is not.
    await must(
      'widen',
      server.api.PATCH('/iam/v2beta1/roles/{uid}', {
        params: { path: { uid: role.uid }, query: { updateMask: 'capabilities' } },
        body: { capabilities: ['repo.list', 'repo.create', 'repo.update', 'repo.delete'] },
      }),
    );
    const refused = await arbor(['apply', '--plan', file]);
    t.is(refused.code, 5, refused.stderr);
    t.regex(refused.stderr, /changed since the plan/);
    t.regex(refused.stderr, new RegExp(`role lister ${role.uid} was changed`));
    // The delta is shown again, as it is now.
    t.regex(refused.stdout, /\+ ci gains 4 capabilities in acme\/platform: .*repo\.delete/);
    const byToken = await arbor(['apply', '-f', dir, '--token', token]);
    t.is(byToken.code, 5, byToken.stderr);
    t.false(
      (await children('roleBindings', platform)).some((b) => b.role.uid === role.uid),
      'nothing applied',
    );
  },
);

test.serial(
  'apply refuses a reviewed plan once the claim match of an identity it binds changed: exit 5',
  async (t) => {
    const deployer = await must(
      'deployer',
      server.api.POST('/iam/v2beta1/identities/{uid}', {
        params: { path: { uid: platform } },
        body: {
          name: 'deployer',
          claimMatch: { issuer: 'https://ci.example', subject: 'repo:acme/deploy' },
        },
      }),
    );
    const { file, out } = await savedPlan(`---
apiVersion: arbor.dev/v1alpha1
kind: RoleBinding
metadata: { name: deployer-viewer, namespace: team-a }
spec: { groupRef: { name: platform }, identityUid: ${deployer.uid}, role: viewer }
`);
    t.is(out.code, 2, out.stderr);
    // Whoever the new claim match admits would hold the binding: not what was reviewed.
    await must(
      'claim match',
      server.api.PATCH('/iam/v2beta1/identities/{uid}', {
        params: { path: { uid: deployer.uid }, query: { updateMask: 'claimMatch' } },
        body: { claimMatch: { issuer: 'https://ci.example', subjectPattern: 'repo:.*' } },
      }),
    );
    const refused = await arbor(['apply', '--plan', file]);
    t.is(refused.code, 5, refused.stderr);
    t.regex(refused.stderr, new RegExp(`identity deployer ${deployer.uid} was changed`));
    t.deepEqual(
      (await children('roleBindings', platform)).filter((b) => b.identity.uid === deployer.uid),
      [],
      'nothing applied',
    );
    // A sign-in (its lastSeenTime, hence its ETag, moves) is no change: neither of the
    // identity the binding names, nor of ci, in sync in the manifests (the apply job's own).
    const fresh = await savedPlan(`---
apiVersion: arbor.dev/v1alpha1
kind: RoleBinding
metadata: { name: deployer-viewer, namespace: team-a }
spec: { groupRef: { name: platform }, identityUid: ${deployer.uid}, role: viewer }
`);
    await server.db
      .knex('identities')
      .where('parent_uid', platform)
      .update({ last_seen_at: new Date() });
    const ok = await arbor(['apply', '--plan', fresh.file]);
    t.is(ok.code, 0, ok.stderr);
  },
);

test.serial(
  'apply reports a plan file changed since it was written as tampered, not as the server moving',
  async (t) => {
    const { file, token, out } = await savedPlan(`---
apiVersion: arbor.dev/v1alpha1
kind: RoleBinding
metadata: { name: ci-org-pull, namespace: team-a }
spec: { groupUid: ${org}, identityRef: { name: ci }, role: registry.pull }
`);
    t.is(out.code, 2, out.stderr);
    const text = readFileSync(file, 'utf8');
    // One byte of the manifests flipped (a letter of the role's name).
    const at = text.indexOf('registry.pull') + 'registry.pu'.length;
    const flipped = `${text.slice(0, at)}${String.fromCharCode(text.charCodeAt(at) ^ 0x03)}${text.slice(at + 1)}`;
    t.not(flipped, text);
    writeFileSync(file, flipped);
    const refused = await arbor(['apply', '--plan', file]);
    t.is(refused.code, 3, refused.stderr);
    t.regex(
      refused.stderr,
      /tampered with or damaged since arbor plan wrote it: its seal does not match/,
    );
    t.notRegex(refused.stderr, /changed since the plan/);
    // Broken JSON is said to be damaged too, not "not a plan file".
    writeFileSync(file, text.replace('"ArborPlan",', '"ArborPlan"'));
    const broken = await arbor(['apply', '--plan', file]);
    t.is(broken.code, 3, broken.stderr);
    t.regex(broken.stderr, /tampered with or damaged/);
    // An intact file whose plan is not the one the review showed (another token).
    writeFileSync(file, text);
    const other = await arbor(['apply', '--plan', file, '--token', `x${token.slice(1)}`]);
    t.is(other.code, 3, other.stderr);
    t.regex(other.stderr, /is not the reviewed plan/);
    t.false(
      (await children('roleBindings', org)).some((b) => b.role.name === 'registry.pull'),
      'nothing applied',
    );
    // The file as written applies.
    const ok = await arbor(['apply', '--plan', file, '--token', token]);
    t.is(ok.code, 0, ok.stderr);
  },
);
