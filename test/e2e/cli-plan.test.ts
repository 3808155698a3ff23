import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { runArbor, type CliRun } from '../helpers/cli-run.js';
import { ADMIN_TOKEN, must, startServer, type TestServer } from '../helpers/server.js';

/**
 * `arbor plan` / `arbor apply` as a real process against a live server: a
 * directory of manifests planned (creates, updates, no changes, prune), applied, and a
 * saved plan refused once the server moved under it.
 */

let server: TestServer;
let home: string;
let dir: string;
let org: string;

function arbor(args: string[]): Promise<CliRun> {
  return runArbor(args, { HOME: home, ARBOR_API_URL: server.url, ARBOR_ADMIN_TOKEN: ADMIN_TOKEN });
}

function manifests(description: string, extra = ''): void {
  writeFileSync(
    join(dir, 'tree.yaml'),
    `apiVersion: arbor.dev/v1alpha1
kind: Group
metadata: { name: platform, namespace: team-a }
spec:
  parentUid: ${org}
  description: ${description}
---
apiVersion: arbor.dev/v1alpha1
kind: Identity
metadata: { name: ci, namespace: team-a }
spec:
  groupRef: { name: platform }
  claimMatch: { issuer: 'https://ci.example', subject: 'repo:acme/platform' }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: not-ours, namespace: team-a }
data: { a: b }
${extra}`,
  );
  writeFileSync(
    join(dir, 'bindings.yml'),
    `apiVersion: arbor.dev/v1alpha1
kind: RoleBinding
metadata: { name: ci-editor, namespace: team-a }
spec:
  groupRef: { name: platform }
  identityRef: { name: ci }
  role: editor
`,
  );
}

type Json = Record<string, any>;
const planJson = (r: CliRun): Json => JSON.parse(r.stdout) as Json;
const actions = (p: Json) =>
  (p.changes as Json[]).map((c) => `${c.action} ${c.object ?? `${c.kind} ${c.title}`}`).sort();

async function platformGroup(): Promise<Json> {
  return (await children('groups', org)).find((g) => g.name === 'platform')!;
}

async function children(kind: 'groups' | 'identities' | 'roleBindings', of: string) {
  const page = await must(
    kind,
    server.api.GET(`/iam/v2beta1/${kind}` as '/iam/v2beta1/groups', {
      params: { query: { 'uidp.children_of': of } },
    }),
  );
  return (page as unknown as Record<string, Json[]>)[kind]!;
}

test.before(async () => {
  server = await startServer();
  home = mkdtempSync(join(tmpdir(), 'arbor-plan-'));
  dir = join(home, 'manifests');
  rmSync(dir, { recursive: true, force: true });
  (await import('node:fs')).mkdirSync(dir);
  org = (await must('org', server.api.POST('/iam/v2beta1/groups', { body: { name: 'acme' } }))).uid;
});

test.after.always(async () => {
  await server?.close();
  rmSync(home, { recursive: true, force: true });
});

test.serial(
  'plan: a new tree is three creates, exit 2; apply makes them; then no changes, exit 0',
  async (t) => {
    manifests('the platform team');
    const table = await arbor(['plan', '-f', dir]);
    t.is(table.code, 2, table.stderr);
    // The parent by its path of names, not its uid.
    t.regex(table.stdout, /\+ create Group team-a\/platform: platform in acme\n/);
    t.regex(table.stdout, /description: "the platform team"/);
    t.regex(table.stdout, /Plan: 3 to create, 0 to update, 0 to delete; 0 unchanged\./);

    const json = await arbor(['plan', '-f', dir, '-o', 'json']);
    t.is(json.code, 2, json.stderr);
    t.deepEqual(actions(planJson(json)), [
      'create Group team-a/platform',
      'create Identity team-a/ci',
      'create RoleBinding team-a/ci-editor',
    ]);
    // A binding to an identity the plan creates has no uid to simulate yet: said so.
    t.deepEqual(planJson(json).access.warnings, [
      'RoleBinding team-a/ci-editor: binds at a group or identity this plan creates; not simulated',
    ]);
    // Nothing was written by planning.
    t.deepEqual(await children('groups', org), []);

    const applied = await arbor(['apply', '-f', dir]);
    t.is(applied.code, 0, applied.stderr);
    t.regex(applied.stdout, /Applied: 3 created, 0 updated, 0 deleted\./);
    const platform = await platformGroup();
    t.is(platform?.name, 'platform');
    t.is(platform?.description, 'the platform team');
    const [ci] = await children('identities', platform!.uid as string);
    t.deepEqual(ci?.claimMatch, { issuer: 'https://ci.example', subject: 'repo:acme/platform' });
    const [binding] = await children('roleBindings', platform!.uid as string);
    t.is(binding?.identity.uid, ci?.uid);
    t.is(binding?.role.name, 'editor');

    const again = await arbor(['plan', '-f', dir]);
    t.is(again.code, 0, again.stderr);
    t.regex(again.stdout, /No changes/);
    t.regex(again.stdout, /3 unchanged/);
  },
);

test.serial(
  'plan: a changed field is an update showing old → new; apply sets exactly it',
  async (t) => {
    manifests('builds and ships');
    const r = await arbor(['plan', '-f', dir, '-o', 'json']);
    t.is(r.code, 2, r.stderr);
    const p = planJson(r);
    t.is(p.changes.length, 1);
    t.like(p.changes[0], { action: 'update', kind: 'Group', object: 'Group team-a/platform' });
    t.deepEqual(p.changes[0].fields, [
      { field: 'description', from: 'the platform team', to: 'builds and ships' },
    ]);
    t.is(p.unchanged.length, 2);
    const a = await arbor(['apply', '-f', dir]);
    t.is(a.code, 0, a.stderr);
    t.is((await platformGroup()).description, 'builds and ships');
    t.is((await arbor(['plan', '-f', dir])).code, 0);
  },
);

test.serial(
  'plan --prune: deletes what no manifest names below the declared groups, and only that',
  async (t) => {
    const platform = await platformGroup();
    const puid = platform!.uid as string;
    const stray = await must(
      'stray',
      server.api.POST('/iam/v2beta1/identities/{uid}', {
        params: { path: { uid: puid } },
        body: { name: 'stray', claimMatch: { issuer: 'https://ci.example', subject: 'stray' } },
      }),
    );
    // A sibling of the declared group: outside what the manifests manage.
    const sibling = await must(
      'sibling',
      server.api.POST('/iam/v2beta1/groups/{uid}', {
        params: { path: { uid: org } },
        body: { name: 'sibling' },
      }),
    );

    const plain = await arbor(['plan', '-f', dir]);
    t.is(plain.code, 0, 'without --prune what the manifests do not name is left alone');

    const r = await arbor(['plan', '-f', dir, '--prune', '-o', 'json']);
    t.is(r.code, 2, r.stderr);
    t.deepEqual(actions(planJson(r)), ['delete Identity stray']);
    t.is(planJson(r).changes[0].uid, stray.uid);

    const a = await arbor(['apply', '-f', dir, '--prune']);
    t.is(a.code, 0, a.stderr);
    t.deepEqual(
      (await children('identities', puid)).map((i) => i.name),
      ['ci'],
    );
    t.true((await children('groups', org)).some((g) => g.uid === sibling.uid));
    t.is((await arbor(['plan', '-f', dir, '--prune'])).code, 0);
  },
);

test.serial(
  'apply --plan: a saved plan is applied while it holds, and refused once the server moved',
  async (t) => {
    const planFile = join(home, 'plan.json');
    manifests('v3');
    const p = await arbor(['plan', '-f', dir, '--out', planFile]);
    t.is(p.code, 2, p.stderr);
    const token = /Plan token: (\S+)/.exec(p.stdout)?.[1];
    t.truthy(token);
    t.is((JSON.parse(readFileSync(planFile, 'utf8')) as Json).plan.token, token);

    // Someone else writes the group after the plan was made.
    const platform = await platformGroup();
    await must(
      'moved',
      server.api.PATCH('/iam/v2beta1/groups/{uid}', {
        params: { path: { uid: platform!.uid as string }, query: { updateMask: 'description' } },
        body: { description: 'changed by hand' },
      }),
    );
    const refused = await arbor(['apply', '--plan', planFile]);
    t.is(refused.code, 5, refused.stderr);
    t.regex(refused.stderr, /changed since the plan/);
    t.is((await platformGroup()).description, 'changed by hand', 'nothing applied');
    const byToken = await arbor(['apply', '-f', dir, '--token', token!]);
    t.is(byToken.code, 5, byToken.stderr);

    // A fresh plan holds, and is applied.
    const fresh = await arbor(['plan', '-f', dir, '--out', planFile]);
    t.is(fresh.code, 2, fresh.stderr);
    const ok = await arbor(['apply', '--plan', planFile]);
    t.is(ok.code, 0, ok.stderr);
    t.is((await platformGroup()).description, 'v3');
    // Applied once, the same plan no longer holds (the server moved: by it).
    t.is((await arbor(['apply', '--plan', planFile])).code, 5);
  },
);

test.serial('plan: failures exit 1, never 2', async (t) => {
  const missing = await arbor(['plan', '-f', join(home, 'nowhere')]);
  t.is(missing.code, 1);
  const usage = await arbor(['plan', '--no-such-flag']);
  t.is(usage.code, 1);
  writeFileSync(
    join(dir, 'broken.yaml'),
    `apiVersion: arbor.dev/v1alpha1
kind: RoleBinding
metadata: { name: dangling, namespace: team-a }
spec: { groupRef: { name: nowhere }, identityRef: { name: ci }, role: viewer }
`,
  );
  const dangling = await arbor(['plan', '-f', dir]);
  t.is(dangling.code, 1);
  t.regex(dangling.stderr, /Group team-a\/nowhere, which is not in the manifests/);
  rmSync(join(dir, 'broken.yaml'));
});

test.serial(
  'apply: a write made after the plan read a resource is refused by its ETag (If-Match)',
  async (t) => {
    const { openSession } = await import('../../src/cli/api-session.js');
    const { buildPlan } = await import('../../src/cli/plan-build.js');
    const { applyPlan } = await import('../../src/cli/plan-apply.js');
    const { loadManifests } = await import('../../src/cli/plan-manifests.js');
    process.env.ARBOR_TOKEN = ADMIN_TOKEN;
    const s = await openSession(server.url);
    manifests('v4');
    const plan = await buildPlan(s, await loadManifests(dir), { prune: false });
    t.is(plan.changes.length, 1);
    const platform = await platformGroup();
    await must(
      'moved',
      server.api.PATCH('/iam/v2beta1/groups/{uid}', {
        params: { path: { uid: platform.uid as string }, query: { updateMask: 'description' } },
        body: { description: 'raced' },
      }),
    );
    const e = await t.throwsAsync(applyPlan(s, plan, () => undefined));
    t.regex(e.message, /changed since the plan/);
    t.is((e as { exitCode?: number }).exitCode, 5);
    t.is((await platformGroup()).description, 'raced');
  },
);

test.serial(
  'plan: the access delta of a binding to an existing identity, from access:simulate',
  async (t) => {
    manifests(
      'v4',
      `---
apiVersion: arbor.dev/v1alpha1
kind: RoleBinding
metadata: { name: ci-org-viewer, namespace: team-a }
spec: { groupUid: ${org}, identityRef: { name: ci }, role: viewer }
`,
    );
    const r = await arbor(['plan', '-f', dir, '-o', 'json']);
    t.is(r.code, 2, r.stderr);
    const access = planJson(r).access as Json;
    t.is(access.unavailable, undefined, JSON.stringify(access));
    const gains = (access.changes as Json[]).filter((c) => c.effect === 'gain');
    t.true(
      gains.some(
        (c) =>
          c.identity === 'ci' &&
          c.identityPath === 'acme/platform/ci' &&
          c.capabilities.includes('groups.list') &&
          c.group === 'acme',
      ),
      JSON.stringify(access.changes),
    );
    t.is(access.totalCount, access.changes.length);
    // One entry per identity and group: ci's capabilities at acme are one line.
    t.is(gains.filter((c) => c.identity === 'ci' && c.group === 'acme').length, 1);
    t.true((access.changes as Json[]).every((c) => c.effect === 'gain'));
    const table = await arbor(['plan', '-f', dir]);
    t.regex(table.stdout, /\+ ci gains \d+ capabilities in acme: .*groups\.list/);
  },
);

test.serial(
  'plan and apply a scheduled RoleBinding: spec.notBefore is created, diffed (replaced when it moves) and simulated as a start',
  async (t) => {
    const scheduled = (notBefore: string) =>
      manifests(
        'v4',
        `---
apiVersion: arbor.dev/v1alpha1
kind: RoleBinding
metadata: { name: ci-org-owner, namespace: team-a }
spec: { groupUid: ${org}, identityRef: { name: ci }, role: owner, notBefore: '${notBefore}' }
`,
      );
    const later = new Date(Date.now() + 3_600_000).toISOString();
    scheduled(later);
    const plan = await arbor(['plan', '-f', dir, '-o', 'json']);
    t.is(plan.code, 2, plan.stderr);
    const create = (planJson(plan).changes as Json[]).find(
      (c) => c.object === 'RoleBinding team-a/ci-org-owner',
    )!;
    t.is(create.action, 'create');
    t.is(create.body.notBefore, later);
    t.true((create.fields as Json[]).some((f) => f.field === 'notBefore' && f.to === later));
    // Not started: the owner binding grants nothing now, so no access changes by it.
    const access = planJson(plan).access as Json;
    t.is(access.unavailable, undefined, JSON.stringify(access));
    t.false(
      (access.changes as Json[]).some((c) => c.capabilities.includes('groups.delete')),
      JSON.stringify(access.changes),
    );
    // The same binding started an hour ago grants at once: the delta shows it.
    const started = new Date(Date.now() - 3_600_000).toISOString();
    scheduled(started);
    const now = await arbor(['plan', '-f', dir, '-o', 'json']);
    t.true(
      ((planJson(now).access as Json).changes as Json[]).some(
        (c) =>
          c.identity === 'ci' && c.capabilities.includes('groups.delete') && c.effect === 'gain',
      ),
    );

    scheduled(later);
    const applied = await arbor(['apply', '-f', dir]);
    t.is(applied.code, 0, applied.stderr);
    const bound = (await children('roleBindings', org)).find((b) => b.role.name === 'owner')!;
    t.is(bound.notBefore, later);
    t.true(bound.pending);
    const same = await arbor(['plan', '-f', dir]);
    t.is(same.code, 0, same.stdout);

    // A start is set once: moving it replaces the binding (delete, then create).
    const moved = new Date(Date.now() + 7_200_000).toISOString();
    scheduled(moved);
    const replan = await arbor(['plan', '-f', dir, '-o', 'json']);
    t.is(replan.code, 2, replan.stderr);
    const mine = (planJson(replan).changes as Json[]).filter(
      (c) => c.object === 'RoleBinding team-a/ci-org-owner',
    );
    t.deepEqual(
      mine.map((c) => c.action),
      ['delete', 'create'],
    );
    t.regex(mine[0]!.why as string, /starts at .*, and a start is set once/);
    t.is((await arbor(['apply', '-f', dir])).code, 0);
    const again = (await children('roleBindings', org)).find((b) => b.role.name === 'owner')!;
    t.not(again.uid, bound.uid);
    t.is(again.notBefore, moved);

    // What a manifest may not say: not a time, or a start not before its end.
    scheduled('next tuesday');
    const bad = await arbor(['plan', '-f', dir]);
    t.is(bad.code, 1);
    t.regex(bad.stderr, /spec\.notBefore must be an RFC 3339 time/);
    manifests(
      'v4',
      `---
apiVersion: arbor.dev/v1alpha1
kind: RoleBinding
metadata: { name: ci-org-owner, namespace: team-a }
spec:
  groupUid: ${org}
  identityRef: { name: ci }
  role: owner
  notBefore: '${moved}'
  expireTime: '${later}'
`,
    );
    const empty = await arbor(['plan', '-f', dir]);
    t.is(empty.code, 1);
    t.regex(empty.stderr, /spec\.notBefore must be before spec\.expireTime/);
    manifests('v4');
  },
);
