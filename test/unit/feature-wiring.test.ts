import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';

/**
 * The registry (repos and tags) and the advisories were kinds of the core before they were
 * features, and their files keep the names they had (registry-routes.ts, registry-wire.ts,
 * advisory-import-route.ts…), which the guide's table (adding-a-kind.test.ts) does not
 * spell. This holds them to the same claim: their services, stores, routes, descriptors,
 * gRPC services and features are named in src/ only by their own files, their feature and
 * the registry src/features.ts, and by no shared wiring list (service-layer.ts, services.ts,
 * compose.ts, api/routes/index.ts, grpc/routes.ts, wire/kinds.ts, db/stores/index.ts).
 */

const root = join(import.meta.dirname, '..', '..');

function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    return statSync(join(root, path)).isDirectory() ? filesUnder(path) : [path];
  });
}

/** The code of a file without its comments (a comment may name anything). */
function codeOf(path: string): string {
  return readFileSync(join(root, path), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1');
}

const src = filesUnder('src').filter((x) => x.endsWith('.ts'));

interface OldFeature {
  feature: string;
  names: readonly string[];
  /** The files that may name them: a folder's path ends with `/`. */
  files: readonly string[];
}

const REGISTRY: OldFeature = {
  feature: 'the registry',
  names: [
    'RepoService',
    'TagService',
    'KnexTagStore',
    'mountRegistryRoutes',
    'REPO_KIND',
    'TAG_KIND',
    'ReposService',
    'TagsService',
    'registryFeature',
  ],
  files: [
    'src/resources/repos/',
    'src/resources/tags/',
    // The token server and the notifications stay core and take the feature's services.
    'src/resources/registry-auth/',
    'src/db/stores/tag-store.ts',
    'src/wire/registry-wire.ts',
    'src/api/routes/registry-routes.ts',
    'src/gen/arbor/registry/',
    'src/features/registry-feature.ts',
    'src/features.ts',
  ],
};

const ADVISORIES: OldFeature = {
  feature: 'the advisories',
  names: [
    'AdvisoryService',
    'AdvisoryImporter',
    'KnexAdvisoryStore',
    'mountAdvisoryRoutes',
    'mountAdvisoryImportRoute',
    'mountAdvisoryImport',
    'ADVISORY_KIND',
    'AdvisoriesService',
    'advisoryFeature',
  ],
  files: [
    'src/resources/advisories/',
    'src/db/stores/advisory-store.ts',
    'src/wire/advisory-wire.ts',
    'src/api/routes/advisory-routes.ts',
    'src/api/routes/advisory-import-route.ts',
    'src/grpc/advisory-import.ts',
    'src/gen/arbor/vulnerabilities/',
    'src/features/advisory-feature.ts',
    'src/features.ts',
  ],
};

const allowedFor = (f: OldFeature, path: string) =>
  f.files.some((a) => (a.endsWith('/') ? path.startsWith(a) : path === a));

/** The files of src/ outside `f`'s own that name one of its names, by name. */
function namedOutside(f: OldFeature): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const name of f.names) {
    const word = new RegExp(`\\b${name}\\b`);
    const naming = src.filter((x) => word.test(codeOf(x)));
    out[name] = naming.length === 0 ? ['(named nowhere)'] : naming.filter((x) => !allowedFor(f, x));
  }
  return out;
}

for (const f of [REGISTRY, ADVISORIES]) {
  test(`${f.feature}: named in src/ only by their own files and their feature`, (t) => {
    const outside = namedOutside(f);
    for (const name of f.names) t.deepEqual(outside[name], [], `${name} outside its files`);
  });
}

test('the check fails for a name a shared wiring list still holds', (t) => {
  // KnexRepoStore stays in createStores() (the token server reads repos too): named outside.
  const shared = namedOutside({ ...REGISTRY, names: ['KnexRepoStore'] });
  t.deepEqual(shared.KnexRepoStore, ['src/db/stores/index.ts', 'src/db/stores/repo-store.ts']);
});
