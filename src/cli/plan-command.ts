import { openSession, type Session } from './api-session.js';
import { CliError, EXIT, reportCliError } from './cli-errors.js';
import { moved, applyPlan } from './plan-apply.js';
import { buildPlan } from './plan-build.js';
import { readPlanFile, writePlanFile, type PlanFile } from './plan-file.js';
import { loadManifests, type Manifest } from './plan-manifests.js';
import { planPaths } from './plan-paths.js';
import { counts, planText } from './plan-print.js';
import { refsMoved } from './plan-refs.js';
import { planToken } from './plan-token.js';
import type { Plan } from './plan-types.js';
import { simulatePlan } from './plan-simulate.js';
import { stableJson } from '../wire/manifest-spec.js';

export interface PlanOpts {
  file?: string;
  prune?: boolean;
  output?: string;
  out?: string;
  api?: string;
  plan?: string;
  token?: string;
}

/** As `terraform plan -detailed-exitcode`: 0 nothing to do, 2 something to do, 1 failed. */
const PLAN_EXIT = { NO_CHANGES: 0, FAILED: 1, CHANGES: 2 } as const;

/**
 * The plan, its access delta and its token, which covers both: what a review sees is what
 * an apply must find again. `strict` (apply): a delta that cannot be worked out fails.
 */
async function makePlan(
  s: Session,
  manifests: Manifest[],
  prune: boolean,
  strict = false,
): Promise<Plan> {
  const draft = await buildPlan(s, manifests, { prune });
  const access = await simulatePlan(s, draft, { strict });
  const plan = { ...draft, access };
  return { ...plan, token: planToken(manifests, plan) };
}

/** JSON as the plan is (uids); text for people, with paths of names (plan-paths.ts). */
async function show(
  s: Session,
  plan: Plan,
  output: string | undefined,
  extra: object = {},
): Promise<void> {
  process.stdout.write(
    output === 'json'
      ? `${JSON.stringify({ ...plan, ...extra }, null, 2)}\n`
      : planText(plan, await planPaths(s, plan)),
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
    if (o.out) await writePlanFile(o.out, { prune: o.prune === true, manifests, plan });
    await show(s, plan, o.output);
    return plan.changes.length === 0 ? PLAN_EXIT.NO_CHANGES : PLAN_EXIT.CHANGES;
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    reportCliError(e);
    return PLAN_EXIT.FAILED;
  }
}

/**
 * Why the plan made now is not the reviewed one, in words: from the saved plan when there
 * is one (which role or identity moved, whether the writes or the access delta differ),
 * else from the tokens alone.
 */
function whyMoved(now: Plan, expected: string, saved: PlanFile | undefined): string {
  if (!saved) return `plan token ${expected} is now ${now.token}`;
  const was = saved.plan;
  if (was.api !== now.api) return `the plan was made against ${was.api}, not ${now.api}`;
  const why = refsMoved(was.refs, now.refs);
  if (stableJson([was.changes, was.unchanged]) !== stableJson([now.changes, now.unchanged]))
    why.push('the writes it needs are not the ones planned');
  if (why.length === 0) why.push('the access it changes is not the one reviewed');
  return why.join('; ');
}

/**
 * `arbor apply -f DIR [--prune] [--token T]` or `arbor apply --plan FILE [--token T]`:
 * makes the plan again from the server as it is now, access delta included, shows it, and
 * applies it only if it is the plan reviewed (the file's, or the one whose token `--token`
 * gives); every update and delete carries the ETag the plan read, so a write made
 * meanwhile stops the apply too.
 * @returns 0 when applied (or nothing to do). @throws CliError: exit 5 when the server
 * moved since the plan (which role, identity or part, when a plan file says), exit 3 for a
 * plan file tampered with or not the reviewed one, else as for every command.
 */
export async function applyCommand(o: PlanOpts): Promise<number> {
  if (o.plan && o.file) throw new CliError('give -f <dir> or --plan <file>, not both', EXIT.USAGE);
  const saved = o.plan ? await readPlanFile(o.plan) : undefined;
  if (!saved && !o.file)
    throw new CliError('give -f <directory or file> or --plan <file>', EXIT.USAGE);
  const manifests = saved ? saved.manifests : await loadManifests(o.file!);
  const prune = saved ? saved.prune : o.prune === true;
  if (saved && o.token !== undefined && saved.plan.token !== o.token)
    throw new CliError(
      `${o.plan} is not the reviewed plan: it holds plan ${saved.plan.token}, not ${o.token}; nothing was applied`,
      EXIT.INVALID,
    );
  const expected = saved?.plan.token ?? o.token;
  const s = await openSession(o.api);
  // A reviewed plan's delta must be worked out again to be compared: failing that, stop.
  const plan = await makePlan(s, manifests, prune, expected !== undefined);
  // Shown before anything is decided: what applying would do now, delta included.
  if (o.output !== 'json') await show(s, plan, o.output);
  if (expected !== undefined && plan.token !== expected) {
    if (o.output === 'json') await show(s, plan, 'json', { applied: null });
    throw moved(whyMoved(plan, expected, saved));
  }
  const say = (line: string) => process.stderr.write(line);
  const done =
    plan.changes.length === 0
      ? { created: 0, updated: 0, deleted: 0 }
      : await applyPlan(s, plan, say);
  if (o.output === 'json') await show(s, plan, 'json', { applied: done });
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
