import { pino } from 'pino';
import { stringify } from 'yaml';
import { systemPrincipal, type Principal } from '../auth/principal.js';
import { compose } from '../compose.js';
import { parseListRequest, type ListSpec } from '../core/list-request.js';
import { isRpcError } from '../core/rpc-error.js';
import { isValidUidp } from '../core/uidp.js';
import { GROUP_LIST } from '../resources/groups/group.js';
import { IDENTITY_LIST } from '../resources/identities/identity.js';
import type { ListPage } from '../resources/list-types.js';
import { ROLE_BINDING_LIST } from '../resources/role-bindings/role-binding.js';
import type { Services } from '../services.js';
import { AdminTargetError, adminTarget } from './admin-target.js';
import { CliError } from './cli-errors.js';
import type { TreeSource } from './tree-source.js';

export const EXPORT_USAGE = `usage: arbor export --group <group> [--namespace <ns>] [--api <url>]

Writes the Group, Identities and RoleBindings at and below a group as arbor.dev custom
resources (YAML on stdout): references by name, adoptUid set, deletionPolicy: Orphan.
\`kubectl apply -f\` then adopts the tree as it is: same uids, no recreate, no change to
the resources in Arbor. Identities with static keys are skipped (named on stderr): key
material does not belong in a custom resource. The namespace that applies the YAML needs
the authority to manage the tree (docs/reconciler.md, "Authority").
`;

const API_VERSION = 'arbor.dev/v1alpha1';

/** Every item of a list, following page tokens. */
async function all<T>(
  spec: ListSpec,
  query: Record<string, string>,
  list: (req: ReturnType<typeof parseListRequest>) => Promise<ListPage<T>>,
): Promise<T[]> {
  const out: T[] = [];
  let pageToken: string | undefined;
  do {
    const req = parseListRequest(
      { ...query, page_size: '200', ...(pageToken ? { page_token: pageToken } : {}) },
      spec,
    );
    const page = await list(req);
    out.push(...page.items);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return out;
}

/** A DNS-1123 object name from an Arbor name, unique among `taken`. */
function objectName(arborName: string, uid: string, taken: Set<string>): string {
  let base = arborName
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '')
    .slice(0, 200);
  if (base === '') base = 'x';
  let name = base;
  if (taken.has(name)) name = `${base}-${uid.slice(-8)}`;
  for (let i = 2; taken.has(name); i++) name = `${base}-${uid.slice(-8)}-${i}`;
  taken.add(name);
  return name;
}

export interface ExportResult {
  yaml: string;
  /** Uids not exported, with why. */
  skipped: Array<{ uid: string; why: string }>;
}

/** The tree as the services give it, to `p`. */
export function servicesTree(services: Services, p: Principal): TreeSource {
  return {
    group: (uid) => services.groups.get(p, uid),
    below: (uid) => {
      const below = { 'uidp.descendants_of': uid };
      return Promise.all([
        all(GROUP_LIST, below, (r) => services.groups.list(p, r)),
        all(IDENTITY_LIST, below, (r) => services.identities.list(p, r)),
        all(ROLE_BINDING_LIST, below, (r) => services.roleBindings.list(p, r)),
      ]);
    },
  };
}

/**
 * The custom resources that adopt the tree at `groupUid` as it is.
 * @throws RpcError NOT_FOUND / INVALID_ARGUMENT from the services.
 */
export async function exportTree(
  services: Services,
  p: Principal,
  groupUid: string,
  namespace?: string,
): Promise<ExportResult> {
  return exportFrom(servicesTree(services, p), groupUid, namespace);
}

/** {@link exportTree} from any source of the tree. */
export async function exportFrom(
  source: TreeSource,
  groupUid: string,
  namespace?: string,
): Promise<ExportResult> {
  const root = await source.group(groupUid);
  const [groups, identities, bindings] = await source.below(groupUid);
  const meta = (name: string) => ({ name, ...(namespace ? { namespace } : {}) });
  const docs: object[] = [];
  const skipped: ExportResult['skipped'] = [];

  // Parents before children: shorter uid paths first (the order only helps reading;
  // the reconciler converges any order).
  const tree = [root, ...groups].sort((a, b) => a.uid.length - b.uid.length);
  const groupNames = new Map<string, string>();
  const taken = new Set<string>();
  for (const g of tree) {
    const name = objectName(g.name, g.uid, taken);
    groupNames.set(g.uid, name);
    const parent =
      g.parentUid === null
        ? {}
        : groupNames.has(g.parentUid)
          ? { parentRef: { name: groupNames.get(g.parentUid) } }
          : { parentUid: g.parentUid };
    docs.push({
      apiVersion: API_VERSION,
      kind: 'Group',
      metadata: meta(name),
      spec: {
        name: g.name,
        ...(g.description ? { description: g.description } : {}),
        ...parent,
        adoptUid: g.uid,
        deletionPolicy: 'Orphan',
      },
    });
  }

  const identityNames = new Map<string, string>();
  const takenIds = new Set<string>();
  for (const i of identities) {
    if (!i.claimMatch || i.parentUid === null) {
      skipped.push({ uid: i.uid, why: 'static keys are not managed from Kubernetes' });
      continue;
    }
    const name = objectName(i.name, i.uid, takenIds);
    identityNames.set(i.uid, name);
    docs.push({
      apiVersion: API_VERSION,
      kind: 'Identity',
      metadata: meta(name),
      spec: {
        name: i.name,
        ...(i.description ? { description: i.description } : {}),
        groupRef: { name: groupNames.get(i.parentUid) },
        claimMatch: i.claimMatch,
        adoptUid: i.uid,
        deletionPolicy: 'Orphan',
      },
    });
  }

  const takenBindings = new Set<string>();
  for (const b of bindings) {
    const who = identityNames.get(b.identity.uid);
    const name = objectName(
      `${who ?? b.identity.uid.slice(-8)}-${b.role.name}`,
      b.uid,
      takenBindings,
    );
    docs.push({
      apiVersion: API_VERSION,
      kind: 'RoleBinding',
      metadata: meta(name),
      spec: {
        groupRef: { name: groupNames.get(b.parentUid) },
        ...(who ? { identityRef: { name: who } } : { identityUid: b.identity.uid }),
        // By uid, not by name: a custom role may shadow a built-in of the same name, and
        // the adopted binding must keep exactly the role it has.
        roleUid: b.role.uid,
        // The window as it is: the reconciler refuses an adopted binding whose start or
        // expiry differs from its spec (both are set once).
        ...(b.expireTime ? { expireTime: new Date(b.expireTime).toISOString() } : {}),
        ...(b.notBefore ? { notBefore: new Date(b.notBefore).toISOString() } : {}),
        adoptUid: b.uid,
        deletionPolicy: 'Orphan',
      },
    });
  }
  const yaml = docs.map((d) => `---\n${stringify(d, { lineWidth: 0 })}`).join('');
  return { yaml, skipped };
}

function parseArgs(
  args: readonly string[],
): { group: string; namespace?: string; api?: string } | undefined {
  let group: string | undefined;
  let namespace: string | undefined;
  let api: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i]!.split('=', 2) as [string, string | undefined];
    const value = inline ?? args[++i];
    if (value === undefined) return undefined;
    if (flag === '--group') group = value;
    else if (flag === '--namespace' || flag === '-n') namespace = value;
    else if (flag === '--api') api = value;
    else return undefined;
  }
  if (group === undefined || group === '') return undefined;
  return { group, ...(namespace ? { namespace } : {}), ...(api ? { api } : {}) };
}

/**
 * `arbor export --group <group> [--namespace <ns>]`, with the database credentials of the
 * configuration (like the other admin commands), or through a server's API. The group is a
 * uid or a path of names (`acme/platform`), resolved as the caller sees it: through the
 * API's `groups:resolve`, or by the names service as the export's system principal.
 * @returns the process exit code: 0 on success, 1 when the group is not found, 2 on usage.
 */
export async function exportCommand(args: readonly string[]): Promise<number> {
  if (args[0] === '--help' || args[0] === '-h') {
    process.stdout.write(EXPORT_USAGE);
    return 0;
  }
  const parsed = parseArgs(args);
  if (!parsed) {
    process.stderr.write(EXPORT_USAGE);
    return 2;
  }
  const target = await adminTarget(parsed.api);
  const write = (r: ExportResult) => {
    process.stdout.write(r.yaml);
    for (const s of r.skipped) process.stderr.write(`arbor: export: skipped ${s.uid}: ${s.why}\n`);
    return 0;
  };
  const refused = (e: unknown) => {
    if (!isRpcError(e) && !(e instanceof AdminTargetError) && !(e instanceof CliError)) throw e;
    process.stderr.write(`arbor: export: ${e.message}\n`);
    if (e instanceof CliError) for (const line of e.details) process.stderr.write(`${line}\n`);
    return 1;
  };
  if (target.kind === 'api') {
    const [{ apiTree }, { resolveUid }] = await Promise.all([
      import('./export-api.js'),
      import('./name-resolver.js'),
    ]);
    return resolveUid(target.session, 'groups', parsed.group)
      .then((uid) => exportFrom(apiTree(target.client), uid, parsed.namespace))
      .then(write, refused);
  }
  const { config } = target;
  const logger = pino({ level: config.logLevel, base: { service: 'arbor' } }, pino.destination(2));
  const arbor = await compose(config, { logger, role: 'export' });
  try {
    const p = systemPrincipal('export');
    const uid = isValidUidp(parsed.group)
      ? parsed.group
      : (await arbor.services.names.group(p, parsed.group)).uid;
    const r = await exportTree(arbor.services, p, uid, parsed.namespace);
    return write(r);
  } catch (e) {
    return refused(e);
  } finally {
    await arbor.close();
  }
}
