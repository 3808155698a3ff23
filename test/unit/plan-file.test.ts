import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { CliError } from '../../src/cli/cli-errors.js';
import { readPlanFile, writePlanFile } from '../../src/cli/plan-file.js';
import type { Manifest } from '../../src/cli/plan-manifests.js';
import { refsMoved } from '../../src/cli/plan-refs.js';
import { planToken } from '../../src/cli/plan-token.js';
import type { Plan } from '../../src/cli/plan-types.js';
import { stableJson } from '../../src/wire/manifest-spec.js';

const manifests = [
  {
    kind: 'Group',
    namespace: 'team-a',
    name: 'platform',
    spec: { description: 'the platform team' },
  },
] as unknown as Manifest[];

function plan(over: Partial<Plan> = {}): Plan {
  const p = {
    api: 'https://arbor.example',
    changes: [],
    unchanged: [],
    refs: [{ kind: 'Role' as const, uid: 'r', name: 'lister', digest: 'd1' }],
    notes: [],
    access: { changes: [], totalCount: 0, warnings: [] },
    ...over,
  };
  return { ...p, token: planToken(manifests, p) };
}

async function written(p = plan()): Promise<string> {
  const path = join(mkdtempSync(join(tmpdir(), 'plan-file-')), 'plan.json');
  await writePlanFile(path, { prune: false, manifests, plan: p });
  return path;
}

const failure = async (path: string) =>
  (await readPlanFile(path).then(
    () => undefined,
    (e: unknown) => e,
  )) as CliError | undefined;

test('a plan file reads back as written', async (t) => {
  const path = await written();
  const f = await readPlanFile(path);
  t.is(f.plan.token, plan().token);
});

test('a flipped byte fails the seal: tampered (exit 3), not the server moving', async (t) => {
  const path = await written();
  const text = readFileSync(path, 'utf8');
  const at = text.indexOf('the platform team');
  writeFileSync(path, `${text.slice(0, at)}T${text.slice(at + 1)}`);
  const e = await failure(path);
  t.true(e instanceof CliError);
  t.regex(e!.message, /tampered with or damaged.*its seal does not match/);
  t.is(e!.exitCode, 3);
});

test('broken JSON of a plan file is damaged; another file is no plan file', async (t) => {
  const path = await written();
  writeFileSync(path, readFileSync(path, 'utf8').slice(0, -10));
  t.regex((await failure(path))!.message, /tampered with or damaged.*no longer valid JSON/);
  writeFileSync(path, 'kind: Group\n');
  const other = await failure(path);
  t.regex(other!.message, /is not a plan file/);
  t.is(other!.exitCode, 2);
});

test('resealed after an edit, a file whose token its content does not give is tampered', async (t) => {
  const path = await written();
  const f = JSON.parse(readFileSync(path, 'utf8')) as Record<string, any>;
  f.manifests[0].spec.description = 'owned';
  const { seal: _, ...body } = f;
  f.seal = createHash('sha256')
    .update(
      stableJson({
        kind: body.kind,
        version: body.version,
        prune: body.prune,
        manifests: body.manifests,
        plan: body.plan,
      }),
    )
    .digest('base64url');
  writeFileSync(path, JSON.stringify(f));
  t.regex((await failure(path))!.message, /its plan token is not the one its content gives/);
});

test('a plan file of another version is refused with what to do', async (t) => {
  const path = await written();
  const f = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  writeFileSync(path, JSON.stringify({ ...f, version: 1 }));
  t.regex((await failure(path))!.message, /another version of arbor/);
});

test('the token covers the roles and identities named, and the access delta', (t) => {
  const base = plan();
  const widened = plan({ refs: [{ kind: 'Role', uid: 'r', name: 'lister', digest: 'd2' }] });
  t.not(widened.token, base.token);
  const more = plan({
    access: {
      changes: [
        {
          effect: 'gain',
          identity: 'ci',
          identityPath: 'p/ci',
          capabilities: ['repo.delete'],
          group: 'p',
        },
      ],
      totalCount: 1,
      warnings: [],
    },
  });
  t.not(more.token, base.token);
  t.deepEqual(refsMoved(base.refs, widened.refs), ['role lister r was changed (its capabilities)']);
  t.deepEqual(refsMoved(base.refs, base.refs), []);
});
