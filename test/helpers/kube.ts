import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';

/**
 * A real kube-apiserver for e2e tests, never a mock:
 * 1. `ARBOR_TEST_KUBECONFIG` names a cluster to use as is (kind, a dev cluster), or
 * 2. binaries built by `scripts/control-plane/build.sh` are in the cache, and each test
 *    file starts its own etcd + kube-apiserver with `start.sh` (about 5 s) and stops it
 *    at the end, or
 * 3. neither: `kubeAvailability()` says why, and the test file registers its tests as
 *    skipped.
 * Either way the CRDs from `crds/` are applied before the tests run.
 */
const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../', import.meta.url));
const scripts = join(repo, 'scripts/control-plane');

export type KubeAvailability =
  | { available: true; mode: 'external'; kubeconfig: string }
  | { available: true; mode: 'local'; binDir: string }
  | { available: false; reason: string };

/** The bin dir build.sh writes for the Kubernetes version it pins, if it is complete. */
function cachedBinDir(): string | undefined {
  const build = readFileSync(join(scripts, 'build.sh'), 'utf8');
  const version = /^readonly K8S_VERSION=(\S+)/m.exec(build)?.[1];
  if (!version) return undefined;
  const cache = process.env.ARBOR_CACHE ?? join(homedir(), '.cache/arbor');
  const dir = join(cache, 'k8s', version, 'bin');
  const complete = ['etcd', 'kube-apiserver', 'kubectl', '.stamp'].every((f) =>
    existsSync(join(dir, f)),
  );
  return complete ? dir : undefined;
}

/** Decide, synchronously enough for test registration, whether a cluster can be had. */
export function kubeAvailability(): KubeAvailability {
  const external = process.env.ARBOR_TEST_KUBECONFIG;
  if (external) return { available: true, mode: 'external', kubeconfig: external };
  const binDir = cachedBinDir();
  if (binDir) return { available: true, mode: 'local', binDir };
  return {
    available: false,
    reason:
      'no Kubernetes control plane: set ARBOR_TEST_KUBECONFIG, or build one with ' +
      'scripts/control-plane/build.sh (needs Go >= 1.26 and the Go module proxy)',
  };
}

export interface TestCluster {
  kc: KubeConfig;
  kubeconfigPath: string;
  custom: CustomObjectsApi;
  core: CoreV1Api;
  /** Run kubectl against the cluster; resolves to stdout. */
  kubectl(args: string[], input?: string): Promise<string>;
  /** A fresh namespace (namespaces never finish deleting without a controller manager). */
  namespace(prefix: string): Promise<string>;
  close(): Promise<void>;
  /**
   * Restart kube-apiserver and/or etcd in place (`restart.sh`); undefined for an external
   * cluster, which tests must not disturb.
   */
  restart?: (which: 'apiserver' | 'etcd' | 'both', downSeconds?: number) => Promise<void>;
}

/** @throws when the control plane does not start or the CRDs do not become established. */
export async function startCluster(
  a: Extract<KubeAvailability, { available: true }>,
): Promise<TestCluster> {
  let dir: string | undefined;
  let kubeconfigPath: string;
  let kubectlBin: string;
  if (a.mode === 'external') {
    kubeconfigPath = a.kubeconfig;
    kubectlBin = process.env.ARBOR_TEST_KUBECTL ?? 'kubectl';
  } else {
    dir = mkdtempSync(join(tmpdir(), 'arbor-kube-'));
    await run('bash', [join(scripts, 'start.sh'), dir], {
      env: { ...process.env, ARBOR_KUBE_BIN_DIR: a.binDir },
      timeout: 150_000,
    });
    const env = Object.fromEntries(
      readFileSync(join(dir, 'env'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('='))
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    kubeconfigPath = env.KUBECONFIG!;
    kubectlBin = env.ARBOR_TEST_KUBECTL ?? join(a.binDir, 'kubectl');
  }
  const stop = async () => {
    if (dir === undefined) return;
    const keep = process.env.ARBOR_TEST_KEEP_KUBE === '1';
    await run('bash', [join(scripts, 'stop.sh'), dir, ...(keep ? [] : ['--rm'])], {
      timeout: 60_000,
    });
  };
  const kubectl = async (args: string[], input?: string): Promise<string> => {
    const child = run(kubectlBin, ['--kubeconfig', kubeconfigPath, ...args], { timeout: 60_000 });
    if (input !== undefined) child.child.stdin?.end(input);
    return (await child).stdout;
  };
  try {
    await kubectl(['apply', '--server-side', '--force-conflicts', '-f', join(repo, 'crds')]);
    await kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/groups.arbor.dev',
      'crd/identities.arbor.dev',
      'crd/rolebindings.arbor.dev',
      'crd/namespaceauthorities.arbor.dev',
    ]);
  } catch (e) {
    await stop().catch(() => undefined);
    throw e;
  }
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  let n = 0;
  return {
    kc,
    kubeconfigPath,
    custom: kc.makeApiClient(CustomObjectsApi),
    core,
    kubectl,
    namespace: async (prefix) => {
      const name = `${prefix}-${process.pid}-${++n}-${Math.random().toString(36).slice(2, 6)}`;
      await core.createNamespace({ body: { metadata: { name } } });
      return name;
    },
    close: stop,
    ...(dir === undefined
      ? {}
      : {
          restart: async (which: 'apiserver' | 'etcd' | 'both', downSeconds = 2) => {
            await run('bash', [join(scripts, 'restart.sh'), dir!, which, String(downSeconds)], {
              timeout: 150_000,
            });
          },
        }),
  };
}

/** Poll `fn` until it returns a value other than undefined, or fail after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

// ---- driving the reconciler against a cluster ---------------------------------------

export type Kind = 'Group' | 'Identity' | 'RoleBinding';
const PLURAL = { Group: 'groups', Identity: 'identities', RoleBinding: 'rolebindings' } as const;

export const condition = (obj: any, type: 'Ready' | 'Synced') =>
  (obj?.status?.conditions ?? []).find((x: any) => x.type === type);

/** Custom-resource helpers for one namespace of the cluster. */
export function crs(c: TestCluster, namespace: string) {
  const at = (kind: Kind) => ({
    group: 'arbor.dev',
    version: 'v1alpha1',
    plural: PLURAL[kind],
    namespace,
  });
  const get = async (kind: Kind, name: string): Promise<any> => {
    try {
      return await c.custom.getNamespacedCustomObject({ ...at(kind), name });
    } catch (e: any) {
      if (e?.code === 404) return undefined; // gone
      throw e;
    }
  };
  /** Wait until `pred` holds for the object; returns it. */
  const waitFor = (kind: Kind, name: string, pred: (o: any) => boolean, timeoutMs?: number) =>
    eventually(
      `${kind} ${namespace}/${name}`,
      async () => {
        const o = await get(kind, name);
        return o && pred(o) ? o : undefined;
      },
      timeoutMs,
    );
  return {
    get,
    waitFor,
    apply: (kind: Kind, name: string, spec: object): Promise<any> =>
      c.custom.createNamespacedCustomObject({
        ...at(kind),
        body: { apiVersion: 'arbor.dev/v1alpha1', kind, metadata: { name, namespace }, spec },
      }),
    patch: (kind: Kind, name: string, spec: object): Promise<any> =>
      c.custom.patchNamespacedCustomObject(
        { ...at(kind), name, body: { spec } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    delete: (kind: Kind, name: string): Promise<unknown> =>
      c.custom.deleteNamespacedCustomObject({ ...at(kind), name }),
    /** Wait until Ready=True for the object's current generation; returns the object. */
    ready: (kind: Kind, name: string, timeoutMs?: number) =>
      waitFor(
        kind,
        name,
        (o) =>
          condition(o, 'Ready')?.status === 'True' &&
          o.status.observedGeneration === o.metadata.generation,
        timeoutMs,
      ),
    gone: (kind: Kind, name: string) =>
      eventually(`${kind} ${name} to be gone`, async () =>
        (await get(kind, name)) === undefined ? true : undefined,
      ),
    /** The Events recorded about one object. */
    events: async (name: string) => {
      const list = await c.core.listNamespacedEvent({
        namespace,
        fieldSelector: `involvedObject.name=${name}`,
      });
      return list.items.map((e) => ({ type: e.type, reason: e.reason, message: e.message }));
    },
  };
}

/**
 * The services with create/update/delete calls counted, to prove that a reconcile of
 * an object in sync writes nothing.
 */
export function countingServices<S extends Record<string, any>>(
  services: S,
  names: Array<keyof S & string>,
) {
  const calls = new Map<string, number>();
  const wrapped: Record<string, unknown> = { ...services };
  for (const name of names) {
    const target = services[name];
    wrapped[name] = new Proxy(target, {
      get(t, prop) {
        const v = Reflect.get(t, prop, t);
        if (typeof v !== 'function') return v;
        const key = `${name}.${String(prop)}`;
        return (...args: unknown[]) => {
          if (['create', 'update', 'delete'].includes(String(prop)))
            calls.set(key, (calls.get(key) ?? 0) + 1);
          // Apply to the real object: services keep #private state a Proxy cannot reach.
          return (v as (...a: unknown[]) => unknown).apply(t, args);
        };
      },
    });
  }
  return {
    services: wrapped as S,
    writes: () => [...calls.values()].reduce((a, b) => a + b, 0),
    calls: (key: string) => calls.get(key) ?? 0,
  };
}
