import type { Session } from './api-session.js';
import { CliError } from './cli-errors.js';
import { parentOf } from './plan-server.js';
import type { AccessDelta, PlanChange, PlanDraft } from './plan-types.js';
import {
  conditionOf,
  conditionWords,
  delegationWords,
  refText,
  simulate,
  type SimulateAnswer,
  type SimulatedChange,
} from './simulate-call.js';

type SimChange = SimulatedChange;

/** What was (and was not) translated into a change set. */
interface SetOf {
  set: SimChange[];
  /** The plan change each simulated change comes from. */
  from: PlanChange[];
  warnings: string[];
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** A binding's value after an update: the new one if it changes, else the old one. */
function after(c: PlanChange, field: string): string | undefined {
  const f = c.fields.find((x) => x.field === field);
  return str(f?.to) ?? str(f?.from);
}

/** A binding create or update as the binding it makes; undefined when a uid is not known yet. */
function bindingCreate(c: PlanChange): SimChange | undefined {
  const created = c.action === 'create';
  const groupUid = created ? c.parentUid : (parentOf(c.uid!) ?? undefined);
  const identityUid = created ? str(c.body?.identityUid) : after(c, 'identityUid');
  const roleUid = created ? str(c.body?.roleUid) : after(c, 'roleUid');
  if (groupUid === undefined || identityUid === undefined || roleUid === undefined)
    return undefined;
  const expireTime = str(c.body?.expireTime);
  const notBefore = str(c.body?.notBefore);
  const condition = conditionOf(c.body?.condition);
  return {
    createRoleBinding: {
      groupUid,
      identityUid,
      roleUid,
      ...(expireTime ? { expireTime } : {}),
      ...(notBefore ? { notBefore } : {}),
      ...(condition ? { condition } : {}),
    },
  } as SimChange;
}

/**
 * The plan's changes as a change set. Creating groups and identities changes no access by
 * itself; a binding to a group or identity the plan creates cannot be named by uid yet, so
 * it is left out and said so.
 */
function changeSetOf(plan: Pick<PlanDraft, 'changes'>): SetOf {
  const out: SetOf = { set: [], from: [], warnings: [] };
  const add = (c: PlanChange, x: SimChange) => (out.set.push(x), out.from.push(c));
  for (const c of plan.changes) {
    if (c.kind === 'Group' && c.action === 'delete') add(c, { deleteGroup: { uid: c.uid! } });
    if (c.kind === 'Identity' && c.action === 'delete') add(c, { deleteIdentity: { uid: c.uid! } });
    if (c.kind !== 'RoleBinding') continue;
    if (c.action !== 'create') add(c, { deleteRoleBinding: { uid: c.uid! } });
    if (c.action === 'delete') continue;
    const create = bindingCreate(c);
    if (create) add(c, create);
    else
      out.warnings.push(
        `${c.object ?? c.title}: binds at a group or identity this plan creates; not simulated`,
      );
  }
  return out;
}

/**
 * The access delta of applying `plan`, from the server's `access:simulate` (first page,
 * 200 entries of an identity's capabilities at a group, with the total). For `arbor plan` a server without it, or a failed
 * simulation, gives a delta that says why instead of failing the plan; `strict` (for
 * `arbor apply`, which must see again the delta that was reviewed) throws instead.
 * @throws CliError (strict only) the simulation's failure.
 */
export async function simulatePlan(
  s: Session,
  plan: Pick<PlanDraft, 'changes'>,
  o: { strict?: boolean } = {},
): Promise<AccessDelta> {
  const { set, from, warnings } = changeSetOf(plan);
  if (set.length === 0) return { changes: [], totalCount: 0, warnings };
  let answer: SimulateAnswer;
  try {
    answer = await simulate(s, { changes: set, pageSize: 200 });
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    if (o.strict)
      throw new CliError(
        `the access delta cannot be worked out again (${e.message}); nothing was applied`,
        e.exitCode,
        e.details,
      );
    return { unavailable: e.message, changes: [], totalCount: 0, warnings };
  }
  for (const v of answer.changes) {
    const c = from[v.index];
    const what = c?.object ?? `${c?.kind} ${c?.uid}`;
    if (!v.applied) warnings.push(`${what}: not simulated (${v.reason ?? 'not found'})`);
    else if (!v.permitted)
      warnings.push(`${what}: you may not make this change (${v.reason ?? 'denied'})`);
  }
  const delegations = (answer.delegationDeltas ?? []).map(delegationWords);
  return {
    changes: answer.deltas.map((d) => {
      const when = conditionOf(d.condition);
      return {
        effect: d.effect === 'GAIN' ? 'gain' : 'lose',
        identity: d.identity.name || d.identity.uid,
        identityPath: d.identity.path,
        capabilities: [...d.capabilities],
        group: refText(d.group),
        ...(when ? { when: conditionWords(when) } : {}),
      };
    }),
    // Only where there are some: a plan's token digests the delta as shown.
    ...(delegations.length > 0 ? { delegations } : {}),
    totalCount: Number(answer.totalCount),
    warnings,
  };
}
