import { stringify } from 'yaml';
import { call, openSession, type Session } from './api-session.js';
import { CliError, EXIT } from './cli-errors.js';
import { resolveUid } from './name-resolver.js';
import {
  conditionWords,
  delegationWords,
  entryWords,
  refText,
  simulate,
  type SimulateAnswer,
  type SimulatedChange,
  type SimulatedEntry,
} from './simulate-call.js';

/** `arbor simulate`'s options, as commander parses them. */
export interface SimulateOptions {
  api?: string;
  output?: string;
  bind?: string;
  unbind?: string;
  role?: string;
  group?: string;
  deleteIdentity?: string;
  deleteGroup?: string;
  roleCapabilities?: string;
  explain?: boolean;
}

/** Entries asked for: one page, the most the server gives (its total says what is left). */
const PAGE = 200;

/** The one change the options describe, by uids (names resolved as the caller sees them). */
async function changeOf(s: Session, o: SimulateOptions): Promise<SimulatedChange> {
  const given = [o.bind, o.unbind, o.deleteIdentity, o.deleteGroup, o.roleCapabilities];
  if (given.filter((x) => x !== undefined).length !== 1)
    throw new CliError(
      'give exactly one change: --bind, --unbind, --delete-identity, --delete-group or --role-capabilities',
      EXIT.USAGE,
    );
  if (o.bind !== undefined || o.unbind !== undefined) {
    if (o.role === undefined || o.group === undefined)
      throw new CliError('--bind and --unbind take --role and --group', EXIT.USAGE);
    const groupUid = await resolveUid(s, 'groups', o.group);
    const roleUid = await resolveUid(s, 'roles', o.role, groupUid);
    const identityUid = await resolveUid(s, 'identities', (o.bind ?? o.unbind)!);
    if (o.bind !== undefined) return { createRoleBinding: { groupUid, identityUid, roleUid } };
    const found = await call<{ roleBindings?: { uid: string }[] }>(
      s,
      'GET',
      '/iam/v2beta1/roleBindings',
      {
        params: { query: { group: groupUid, identity: identityUid, role: roleUid, page_size: 2 } },
      },
    );
    const uid = found.roleBindings?.[0]?.uid;
    if (uid === undefined)
      throw new CliError(`${o.unbind} holds no ${o.role} binding at ${o.group}`, EXIT.NOT_FOUND);
    return { deleteRoleBinding: { uid } };
  }
  if (o.deleteIdentity !== undefined)
    return { deleteIdentity: { uid: await resolveUid(s, 'identities', o.deleteIdentity) } };
  if (o.deleteGroup !== undefined)
    return { deleteGroup: { uid: await resolveUid(s, 'groups', o.deleteGroup) } };
  const spec = o.roleCapabilities!;
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new CliError('--role-capabilities takes ROLE=cap1,cap2', EXIT.USAGE);
  const capabilities = spec
    .slice(eq + 1)
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean) as Extract<
    SimulatedChange,
    { updateRole: unknown }
  >['updateRole']['capabilities'];
  const uid = await resolveUid(
    s,
    'roles',
    spec.slice(0, eq),
    o.group && (await resolveUid(s, 'groups', o.group)),
  );
  return { updateRole: { uid, capabilities } };
}

/** One grant of an entry's proof, in words. */
function grantWords(g: SimulatedEntry['before'][number]): string {
  const what = g.bindingUid ? `binding ${g.bindingUid}` : `the new binding`;
  const role = g.role.name || g.role.uid;
  const caps = g.capabilities.length;
  const c = (g as { condition?: Parameters<typeof conditionWords>[0] }).condition;
  const when = c ? `; when ${conditionWords(c)}` : '';
  return `${role} at ${g.groupUid} (${what}; ${caps} of them${when})`;
}

/** The answer for people: the verdict's warnings, one line per identity and group. */
function simulateText(a: SimulateAnswer, explain: boolean): string {
  const out: string[] = [];
  for (const v of a.changes) {
    if (!v.applied) out.push(`note: the change is not simulated (${v.reason ?? 'not found'})`);
    else if (!v.permitted) out.push(`note: you may not make this change (${v.reason ?? 'denied'})`);
  }
  const delegations = a.delegationDeltas ?? [];
  if (a.deltas.length === 0 && delegations.length === 0)
    out.push('No access changes (that you may see).');
  for (const e of a.deltas) {
    out.push(entryWords(e));
    if (!explain) continue;
    const who = e.identity.path || e.identity.uid;
    out.push(`  identity: ${who}; group: ${refText(e.group)}`);
    out.push(`  capabilities: ${e.capabilities.join(', ')}`);
    for (const g of e.before) out.push(`  before: ${grantWords(g)}`);
    for (const g of e.after) out.push(`  after: ${grantWords(g)}`);
    for (const u of e.unchangedBelow)
      out.push(`  unchanged below ${u.groupUid}: ${u.capabilities.join(', ')}`);
  }
  for (const d of delegations) out.push(delegationWords(d));
  const total = Number(a.totalCount);
  const shown = a.deltas.length + delegations.length;
  if (total > shown) out.push(`… and ${total - shown} more (-o json for all of this page)`);
  return `${out.join('\n')}\n`;
}

/**
 * `arbor simulate`: what one change, given by names, would do to access, per identity and
 * group. Nothing is changed (`access:simulate`); the caller sees only what it may list.
 */
export async function simulateCommand(o: SimulateOptions): Promise<number> {
  const s = await openSession(o.api);
  const change = await changeOf(s, o);
  const answer = await simulate(s, {
    changes: [change],
    pageSize: PAGE,
    ...(o.explain ? { explain: true } : {}),
  });
  if (o.output === 'json') process.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
  else if (o.output === 'yaml') process.stdout.write(stringify(answer));
  else process.stdout.write(simulateText(answer, o.explain === true));
  return EXIT.OK;
}
