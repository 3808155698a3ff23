import type { PlanPaths } from './plan-paths.js';
import type { AccessDelta, Plan, PlanChange } from './plan-types.js';

const SIGN = { create: '+', update: '~', delete: '-' } as const;

/** A field's value as people read it in a diff. */
function shown(v: unknown): string {
  if (v === undefined || v === null) return '(none)';
  if (typeof v === 'string') return JSON.stringify(v);
  return JSON.stringify(v);
}

/** A change's lines; uids read as paths of names where `paths` has them (plan-paths.ts). */
function changeLines(c: PlanChange, paths: PlanPaths): string[] {
  const pathOf = (uid: string) => paths.get(uid) ?? uid;
  const what = c.object ?? `${c.kind} ${pathOf(c.uid ?? '')}`;
  const where =
    c.action === 'create'
      ? c.parentUid
        ? ` in ${pathOf(c.parentUid)}`
        : c.parentObject
          ? ` in ${c.parentObject}`
          : ' (an organization)'
      : ` ${pathOf(c.uid ?? '')}`;
  const out = [`${SIGN[c.action]} ${c.action} ${what}: ${c.title}${where}`];
  if (c.why) out.push(`    (${c.why})`);
  const width = Math.max(0, ...c.fields.map((f) => f.field.length));
  for (const f of c.fields) {
    const name = `${f.field}:`.padEnd(width + 1);
    out.push(
      c.action === 'create'
        ? `    ${name} ${shown(f.to)}`
        : `    ${name} ${shown(f.from)} → ${shown(f.to)}`,
    );
  }
  return out;
}

/** The access delta's lines: who gains or loses which capabilities where, one line each. */
function accessLines(a: AccessDelta | undefined): string[] {
  if (!a) return [];
  if (a.unavailable) return ['', `Access: not worked out (${a.unavailable}).`];
  if (a.totalCount === 0 && a.warnings.length === 0) return ['', 'Access: no change.'];
  const out = [
    '',
    `Access: ${a.totalCount} change(s)${a.totalCount > a.changes.length ? `, first ${a.changes.length} shown` : ''}.`,
  ];
  for (const c of a.changes) {
    const n = c.capabilities.length;
    const what = n === 1 ? c.capabilities[0] : `${n} capabilities`;
    const list = n === 1 ? '' : `: ${c.capabilities.join(', ')}`;
    const when = c.when === undefined ? '' : ` when ${c.when}`;
    out.push(
      `  ${c.effect === 'gain' ? '+' : '-'} ${c.identity} ${c.effect === 'gain' ? 'gains' : 'loses'} ${what} in ${c.group}${when}${list}`,
    );
  }
  for (const d of a.delegations ?? []) out.push(`  ${d}`);
  for (const w of a.warnings) out.push(`  note: ${w}`);
  return out;
}

/** How many of each action: the summary line's words and the exit code's source. */
export function counts(plan: Plan): Record<'create' | 'update' | 'delete', number> {
  const n = { create: 0, update: 0, delete: 0 };
  for (const c of plan.changes) n[c.action]++;
  return n;
}

/** The plan for people, `terraform plan`-like: one block per change, a summary, the token. */
export function planText(plan: Plan, paths: PlanPaths = new Map()): string {
  const lines = [`Arbor plan against ${plan.api}`, ''];
  if (plan.changes.length === 0) lines.push('No changes: Arbor matches the manifests.');
  for (const c of plan.changes) lines.push(...changeLines(c, paths));
  for (const n of plan.notes) lines.push(`note: ${n}`);
  lines.push(...accessLines(plan.access));
  const n = counts(plan);
  lines.push(
    '',
    `Plan: ${n.create} to create, ${n.update} to update, ${n.delete} to delete; ${plan.unchanged.length} unchanged.`,
    `Plan token: ${plan.token}`,
  );
  return `${lines.join('\n')}\n`;
}
