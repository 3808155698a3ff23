import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { stableJson } from '../wire/manifest-spec.js';
import { CliError, EXIT } from './cli-errors.js';
import type { Manifest } from './plan-manifests.js';
import { planToken } from './plan-token.js';
import type { Plan } from './plan-types.js';

/** What `arbor plan --out` writes and `arbor apply --plan` reads: the plan and its inputs. */
export interface PlanFile {
  kind: 'ArborPlan';
  version: 2;
  prune: boolean;
  manifests: Manifest[];
  plan: Plan;
  /** A digest of everything above: a file changed since `arbor plan` wrote it fails it. */
  seal: string;
}

type Unsealed = Omit<PlanFile, 'seal'>;

function sealOf(f: Unsealed): string {
  const text = stableJson({
    kind: f.kind,
    version: f.version,
    prune: f.prune,
    manifests: f.manifests,
    plan: f.plan,
  });
  return createHash('sha256').update(text).digest('base64url');
}

/** Writes the plan file, mode 0600 (it holds no credential, but names what it will grant). */
export async function writePlanFile(
  path: string,
  f: Omit<Unsealed, 'kind' | 'version'>,
): Promise<void> {
  const body: Unsealed = { kind: 'ArborPlan', version: 2, ...f };
  const file: PlanFile = { ...body, seal: sealOf(body) };
  await writeFile(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
}

function tampered(path: string, why: string): CliError {
  return new CliError(
    `${path} has been tampered with or damaged since arbor plan wrote it: ${why}; nothing was applied`,
    EXIT.INVALID,
    ['  make the plan again (arbor plan --out) and review it'],
  );
}

/**
 * Reads a plan file and checks it is as `arbor plan` wrote it: its seal matches its
 * content, and its token is the one its own manifests and plan give. The seal is a digest,
 * not a signature: it tells a damaged or hand-edited file from a server that moved, and
 * whoever could rewrite the file could reseal it. What binds an apply to a review is the
 * token the reviewer saw: give it with `--token` and a file with another plan is refused.
 * @throws CliError: USAGE for what is no plan file, INVALID for a tampered one.
 */
export async function readPlanFile(path: string): Promise<PlanFile> {
  const text = await readFile(path, 'utf8').catch((e: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read ${path}: ${e.code ?? e.message}`, EXIT.USAGE);
  });
  let f: PlanFile;
  try {
    f = JSON.parse(text) as PlanFile;
  } catch {
    if (text.includes('"ArborPlan"')) throw tampered(path, 'it is no longer valid JSON');
    throw new CliError(`${path} is not a plan file (arbor plan --out)`, EXIT.USAGE);
  }
  if (f?.kind !== 'ArborPlan')
    throw new CliError(`${path} is not a plan file (arbor plan --out)`, EXIT.USAGE);
  if (f.version !== 2)
    throw new CliError(
      `${path} was written by another version of arbor (plan file version ${String(f.version)}, this one reads 2)`,
      EXIT.USAGE,
      ['  make the plan again with this arbor (arbor plan --out)'],
    );
  if (typeof f.seal !== 'string' || !Array.isArray(f.manifests) || typeof f.plan !== 'object')
    throw tampered(path, 'a part of it is missing');
  const { seal, ...body } = f;
  if (sealOf(body) !== seal) throw tampered(path, 'its seal does not match its content');
  if (!Array.isArray(f.plan.changes) || planToken(f.manifests, f.plan) !== f.plan.token)
    throw tampered(path, 'its plan token is not the one its content gives');
  return f;
}
