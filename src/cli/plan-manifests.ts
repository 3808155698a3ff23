import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { GroupSpec, IdentitySpec, RoleBindingSpec } from '../wire/manifest-spec.js';
import { CliError, EXIT } from './cli-errors.js';

export type ManifestKind = 'Group' | 'Identity' | 'RoleBinding';

/** One arbor.dev custom resource read from a file: what `arbor plan` compares with Arbor. */
export type Manifest =
  | { kind: 'Group'; namespace: string; name: string; spec: GroupSpec }
  | { kind: 'Identity'; namespace: string; name: string; spec: IdentitySpec }
  | { kind: 'RoleBinding'; namespace: string; name: string; spec: RoleBindingSpec };

const KINDS: readonly string[] = ['Group', 'Identity', 'RoleBinding'];
const API_VERSION = 'arbor.dev/v1alpha1';

/** `Kind namespace/name`: how a plan names a manifest (and `kubectl` would, nearly). */
export function manifestKey(m: { kind: string; namespace: string; name: string }): string {
  return `${m.kind} ${m.namespace}/${m.name}`;
}

/** The YAML and JSON files under `dir` (or `dir` itself when it is a file), sorted. */
async function filesOf(dir: string): Promise<string[]> {
  const info = await stat(dir).catch((e: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read ${dir}: ${e.code ?? e.message}`, EXIT.USAGE);
  });
  if (!info.isDirectory()) return [dir];
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && /\.(ya?ml|json)$/i.test(e.name)) out.push(join(e.parentPath, e.name));
  }
  return out.sort();
}

/**
 * The Group, Identity and RoleBinding manifests in `dir` (its YAML and JSON files, any
 * depth, any number of documents each). Other kinds (a Namespace, a ConfigMap) are passed
 * over: a GitOps directory holds more than Arbor's objects. A manifest without a namespace
 * is in `default`, as `kubectl apply` would put it.
 * @throws CliError (exit 2) for unreadable or malformed files and duplicate objects.
 */
export async function loadManifests(dir: string): Promise<Manifest[]> {
  const out: Manifest[] = [];
  const seen = new Set<string>();
  for (const file of await filesOf(dir)) {
    const text = await readFile(file, 'utf8');
    for (const doc of parseAllDocuments(text)) {
      if (doc.errors.length > 0)
        throw new CliError(`${file}: ${doc.errors[0]!.message}`, EXIT.USAGE);
      const m = manifestOf(doc.toJS() as unknown, file);
      if (!m) continue;
      const key = manifestKey(m);
      if (seen.has(key)) throw new CliError(`${file}: ${key} is defined twice`, EXIT.USAGE);
      seen.add(key);
      out.push(m);
    }
  }
  return out;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A document as a manifest, undefined when it is not one of ours (or empty). */
export function manifestOf(raw: unknown, where: string): Manifest | undefined {
  if (!isObj(raw)) return undefined;
  if (raw.kind === 'List' && Array.isArray(raw.items))
    throw new CliError(`${where}: a List is not read; write one document per object`, EXIT.USAGE);
  if (raw.apiVersion !== API_VERSION || !KINDS.includes(String(raw.kind))) {
    if (
      typeof raw.apiVersion === 'string' &&
      raw.apiVersion.startsWith('arbor.dev/') &&
      raw.kind !== 'NamespaceAuthority'
    )
      throw new CliError(
        `${where}: ${String(raw.apiVersion)} ${String(raw.kind)} is not a kind arbor plan reads`,
        EXIT.USAGE,
      );
    return undefined;
  }
  const meta = isObj(raw.metadata) ? raw.metadata : {};
  const name = meta.name;
  if (typeof name !== 'string' || name === '')
    throw new CliError(`${where}: a ${String(raw.kind)} without metadata.name`, EXIT.USAGE);
  const namespace =
    typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : 'default';
  const spec = isObj(raw.spec) ? raw.spec : {};
  return { kind: raw.kind, namespace, name, spec } as Manifest;
}
