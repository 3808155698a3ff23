import { readFile, writeFile } from 'node:fs/promises';
import { openSession, type Session } from './api-session.js';
import { CliError, EXIT, reportCliError } from './cli-errors.js';
import { moved, applyPlan } from './plan-apply.js';
import { buildPlan } from './plan-build.js';
import { loadManifests, type Manifest } from './plan-manifests.js';
import { counts, planText } from './plan-print.js';
import type { Plan } from './plan-types.js';
import { simulatePlan } from './plan-simulate.js';

export interface PlanOpts {
  file?: string;
  prune?: boolean;
  output?: string;
  out?: string;
  api?: string;
  plan?: string;
  token?: string;
}

/** What `arbor plan --out` writes and `arbor apply --plan` reads: the plan and its inputs. */
interface PlanFile {
  kind: 'ArborPlan';
  version: 1;
  prune: boolean;
  manifests: Manifest[];
  plan: Plan;
}

/** As `terraform plan -detailed-exitcode`: 0 nothing to do, 2 something to do, 1 failed. */
const PLAN_EXIT = { NO_CHANGES: 0, FAILED: 1, CHANGES: 2 } as const;

async function makePlan(s: Session, manifests: Manifest[], prune: boolean): Promise<Plan> {
  const plan = await buildPlan(s, manifests, { prune });
  // The access delta is advice, worked out after the token: it never decides an apply.
  return { ...plan, access: await simulatePlan(s, plan) };
}

function show(plan: Plan, output: string | undefined, extra: object = {}): void {
  process.stdout.write(
    output === 'json' ? `${JSON.stringify({ ...plan, ...extra }, null, 2)}\n` : planText(plan),
  );
}

/**
 * `arbor plan -f DIR [--prune] [-o json] [--out FILE]`.
 * @returns 0 when Arbor already matches, 2 when applying would change it, 1 on any failure
 * (reported here, so that no other exit code means something else).
 */
export async function planCommand(o: PlanOpts): Promise<number> {
  try {
    if (!o.file) throw new CliError('give the manifests: -f <directory or file>', EXIT.USAGE);
    const manifests = await loadManifests(o.file);
    const s = await openSession(o.api);
    const plan = await makePlan(s, manifests, o.prune === true);
    if (o.out) {
      const file: PlanFile = {
        kind: 'ArborPlan',
        version: 1,
        prune: o.prune === true,
        manifests,
        plan,
      };
      await writeFile(o.out, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
    }
    show(plan, o.output);
    return plan.changes.length === 0 ? PLAN_EXIT.NO_CHANGES : PLAN_EXIT.CHANGES;
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    reportCliError(e);
    return PLAN_EXIT.FAILED;
  }
}

async function readPlanFile(path: string): Promise<PlanFile> {
  const text = await readFile(path, 'utf8').catch((e: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read ${path}: ${e.code ?? e.message}`, EXIT.USAGE);
  });
  let f: PlanFile;
  try {
    f = JSON.parse(text) as PlanFile;
  } catch {
    throw new CliError(`${path} is not a plan file (arbor plan --out)`, EXIT.USAGE);
  }
  if (f?.kind !== 'ArborPlan' || f.version !== 1 || !Array.isArray(f.manifests) || !f.plan?.token)
    throw new CliError(`${path} is not a plan file (arbor plan --out)`, EXIT.USAGE);
  return f;
}

/**
 * `arbor apply -f DIR [--prune] [--token T]` or `arbor apply --plan FILE`: makes the plan
 * again from the server as it is now and applies it only if it is the plan shown (the
 * file's, or the one whose token `--token` gives); every update and delete carries the
 * ETag the plan read, so a write made meanwhile stops the apply too.
 * @returns 0 when applied (or nothing to do). @throws CliError: exit 5 when the server
 * moved since the plan, else as for every command.
 */
export async function applyCommand(o: PlanOpts): Promise<number> {
  if (o.plan && o.file) throw new CliError('give -f <dir> or --plan <file>, not both', EXIT.USAGE);
  const saved = o.plan ? await readPlanFile(o.plan) : undefined;
  if (!saved && !o.file)
    throw new CliError('give -f <directory or file> or --plan <file>', EXIT.USAGE);
  const manifests = saved ? saved.manifests : await loadManifests(o.file!);
  const prune = saved ? saved.prune : o.prune === true;
  const s = await openSession(o.api);
  const plan = await buildPlan(s, manifests, { prune });
  const expected = saved?.plan.token ?? o.token;
  if (expected !== undefined && plan.token !== expected) {
    if (saved && saved.plan.api !== s.api)
      throw moved(`the plan was made against ${saved.plan.api}, not ${s.api}`);
    throw moved(`plan token ${expected} is now ${plan.token}`);
  }
  const say = (line: string) => process.stderr.write(line);
  if (o.output !== 'json') show(plan, o.output);
  const done =
    plan.changes.length === 0
      ? { created: 0, updated: 0, deleted: 0 }
      : await applyPlan(s, plan, say);
  if (o.output === 'json') show(plan, 'json', { applied: done });
  else {
    const n = counts(plan);
    process.stdout.write(
      plan.changes.length === 0
        ? 'Nothing to apply.\n'
        : `Applied: ${n.create} created, ${n.update} updated, ${n.delete} deleted.\n`,
    );
  }
  return EXIT.OK;
}
