import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePort } from './process.js';
import type { TestServer } from './server.js';

/**
 * A real CNCF Distribution registry for e2e tests, built with `crane` by
 * `scripts/registry/build.sh` into the cache. `registryTools()` says why not when the
 * binaries are absent, so the test file can register itself as skipped.
 */
const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../', import.meta.url));

export type RegistryTools =
  { available: true; registry: string; crane: string } | { available: false; reason: string };

export function registryTools(): RegistryTools {
  const build = readFileSync(join(repo, 'scripts/registry/build.sh'), 'utf8');
  const rv = /^readonly REGISTRY_VERSION=(\S+)/m.exec(build)?.[1] ?? '?';
  const cv = /^readonly CRANE_VERSION=(\S+)/m.exec(build)?.[1] ?? '?';
  const cache = process.env.ARBOR_CACHE ?? join(homedir(), '.cache/arbor');
  const registry = join(cache, 'registry', rv, 'registry');
  const crane = join(cache, 'crane', cv, 'crane');
  const complete = [registry, crane].every(
    (b) => existsSync(b) && existsSync(join(b, '..', '.stamp')),
  );
  if (complete) return { available: true, registry, crane };
  return {
    available: false,
    reason:
      `no registry ${rv} / crane ${cv} in ${cache}: build them with scripts/registry/build.sh ` +
      '(needs Go and the Go module proxy)',
  };
}

export interface RegistryOptions {
  binary: string;
  dir: string;
  /** Arbor's token endpoint, the `issuer` its tokens carry, and its JWKS document. */
  realm: string;
  issuer: string;
  service: string;
  jwks: unknown;
  /** Where notifications go, and the bearer token they carry. */
  notifyUrl: string;
  notifyToken: string;
}

export interface RunningRegistry {
  host: string;
  log(): string;
  stop(): Promise<void>;
}

/** Start `registry serve` on a free loopback port with filesystem storage in `dir`. */
export async function startRegistry(o: RegistryOptions): Promise<RunningRegistry> {
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  mkdirSync(join(o.dir, 'data'), { recursive: true });
  writeFileSync(join(o.dir, 'jwks.json'), JSON.stringify(o.jwks));
  // JSON is YAML: no YAML library needed to write the config.
  const config = {
    version: 0.1,
    log: { level: 'info', formatter: 'text' },
    storage: { filesystem: { rootdirectory: join(o.dir, 'data') }, delete: { enabled: true } },
    http: { addr: host, secret: 'e2e-http-secret-0123456789' },
    auth: {
      token: {
        realm: o.realm,
        service: o.service,
        issuer: o.issuer,
        jwks: join(o.dir, 'jwks.json'),
      },
    },
    notifications: {
      endpoints: [
        {
          name: 'arbor',
          url: o.notifyUrl,
          headers: { Authorization: [`Bearer ${o.notifyToken}`] },
          timeout: '5s',
          threshold: 100,
          backoff: '250ms',
          ignore: { actions: ['pull'] },
        },
      ],
    },
  };
  writeFileSync(join(o.dir, 'config.yml'), JSON.stringify(config));
  let output = '';
  const child: ChildProcess = spawn(o.binary, ['serve', join(o.dir, 'config.yml')], {
    env: { PATH: process.env.PATH ?? '', OTEL_TRACES_EXPORTER: 'none', HOME: o.dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (b: Buffer) => {
    output = (output + b.toString()).slice(-64 * 1024);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`registry exited (${child.exitCode}):\n${output}`);
    try {
      // Token auth is on: the base endpoint answers 401 with a challenge once it serves.
      if ((await fetch(`http://${host}/v2/`)).status === 401) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`registry did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    host,
    log: () => output,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/** Run crane with its own Docker config dir (one per identity); never throws. */
export async function crane(
  binary: string,
  dockerConfig: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  mkdirSync(dockerConfig, { recursive: true });
  try {
    const { stdout, stderr } = await run(binary, ['--insecure', ...args], {
      env: { PATH: process.env.PATH ?? '', DOCKER_CONFIG: dockerConfig, HOME: dockerConfig },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof err.code === 'number' ? err.code : 1,
      stdout: err.stdout ?? '',
      stderr: err.stderr ?? String(e),
    };
  }
}

/**
 * A stock registry whose tokens come from the test server `s` (its token endpoint, issuer
 * and JWKS) and whose notifications go back to it, storing in `dir`.
 */
export async function startRegistryFor(
  s: TestServer,
  o: { binary: string; dir: string; service: string; notifyToken: string },
): Promise<RunningRegistry> {
  return startRegistry({
    binary: o.binary,
    dir: o.dir,
    // A hostname, not 127.0.0.1: crane >= 0.22 refuses token realms on private IP literals
    // (SSRF protection) unless the realm is the registry's own host:port.
    realm: `${s.url.replace('127.0.0.1', 'localhost')}/auth/registry/token`,
    issuer: s.arbor.config.issuerUrl,
    service: o.service,
    jwks: (await s.client().get('/.well-known/jwks.json')).body,
    notifyUrl: `${s.url}/hooks/registry/events`,
    notifyToken: o.notifyToken,
  });
}

/** One small random layer as a tar file under `dir`: a fresh digest on every run. */
export function randomLayer(dir: string): string {
  const content = join(dir, 'content');
  mkdirSync(content);
  writeFileSync(join(content, 'hello.txt'), `hello ${Math.random()}\n`);
  const layer = join(dir, 'layer.tar');
  execFileSync('tar', ['-cf', layer, '-C', content, 'hello.txt']);
  return layer;
}
