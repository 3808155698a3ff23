import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ADMIN_TOKEN, REGISTRY_SERVICE } from './scale.js';

export const ROOT = resolve(import.meta.dirname, '..');

export interface Child {
  name: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });
}

/** Whether `url` answers 2xx; over https, trusting `ca` alone (the bench's own certificate). */
function probe(url: string, ca?: Buffer): Promise<boolean> {
  if (!url.startsWith('https:')) return fetch(url).then((r) => r.ok);
  return new Promise((ok, fail) => {
    https
      .get(url, { ca, agent: false }, (res) => {
        res.resume();
        ok((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300);
      })
      .on('error', fail);
  });
}

async function waitReady(
  url: string,
  child: ChildProcess,
  log: () => string,
  ca?: Buffer,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}:\n${log()}`);
    try {
      if (await probe(url, ca)) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`not ready after 60 s:\n${log()}`);
}

function start(
  name: string,
  args: string[],
  env: Record<string, string>,
  readyUrl: string,
  url: string,
  cleanup = () => {},
  nodeArgs: string[] = [],
  ca?: Buffer,
): Promise<Child> {
  // TypeScript sources run through tsx; built JavaScript (dist/) runs as it is.
  const loader = args[0]?.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...nodeArgs, ...loader, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (b: Buffer) => (out = (out + b.toString()).slice(-8000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', (b: Buffer) => {
    keep(b);
    process.stderr.write(`[${name}] ${b.toString()}`);
  });
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 12_000);
      await exited;
      clearTimeout(t);
    }
    cleanup();
  };
  return waitReady(readyUrl, child, () => out, ca).then(
    () => ({ name, url, pid: child.pid!, stop }),
    async (e: Error) => {
      await stop();
      throw new Error(`${name}: ${e.message}`);
    },
  );
}

let built = false;

/**
 * Compile the server as the image does (`npm run build`), once per bench process. Running
 * the sources through tsx instead held esbuild's transpiler and every module's source in
 * memory: 195 MB resident at idle against 108 MB for the built server.
 */
export function buildOnce(): void {
  if (built) return;
  // `npm run build`: tsc's incremental build and the embedded-database template, each
  // skipped when already up to date.
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  built = true;
}

/** TLS on Arbor's port (bench/open-loop.ts): the PEM files it serves, and the CA to trust. */
export interface BenchTls {
  certFile: string;
  keyFile: string;
  /** The self-signed certificate itself: the only one the bench's clients trust. */
  ca: Buffer;
}

/** The young generation's semi-space the image runs with, MB (Dockerfile ENTRYPOINT, npm start). */
export const IMAGE_SEMI_SPACE_MB = 8;
/** How far V8 lets the old generation grow past what a full GC left live, % (the same). */
export const IMAGE_HEAP_GROWING_PERCENT = 50;

/** The node flags the image runs Arbor with, its young generation `semiSpaceMB` if given. */
export function imageNodeFlags(semiSpaceMB = IMAGE_SEMI_SPACE_MB): string[] {
  return [
    `--max-semi-space-size=${semiSpaceMB}`,
    `--heap-growing-percent=${IMAGE_HEAP_GROWING_PERCENT}`,
  ];
}

/**
 * Arbor exactly as deployed: `node dist/src/main.js serve` (built first), logging at warn, with
 * `workers` processes (ARBOR_WORKERS; 1 is the single process the baseline is compared to).
 * `nodeArgs` (e.g. `--cpu-prof`) go before the script, for bench/profile.ts; `env` is added to
 * the process's environment.
 */
export async function startArbor(
  databaseUrl: string,
  nodeArgs: string[] = [],
  workers = 1,
  env: Record<string, string> = {},
  tls?: BenchTls,
  /**
   * The young generation's semi-space, MB: the image's unless an A/B asks otherwise (or
   * `BENCH_SEMI_SPACE_MB` in the bench's environment, for a whole run).
   */
  semiSpaceMB = Number(process.env.BENCH_SEMI_SPACE_MB ?? IMAGE_SEMI_SPACE_MB),
  /**
   * The server's entry point: this tree's build unless an A/B gives another tree's
   * (`<tree>/dist/src/main.js`, built there: bench/semi-space-ab.ts `main=`).
   */
  main = 'dist/src/main.js',
): Promise<Child> {
  buildOnce();
  const port = await freePort();
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'arbor-bench-'));
  return start(
    'arbor',
    [main, 'serve'],
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      ARBOR_ISSUER_URL: url,
      ARBOR_ADMIN_TOKEN: ADMIN_TOKEN,
      ARBOR_ALLOW_INSECURE_ISSUERS: 'true',
      LOG_LEVEL: 'warn',
      METRICS_PORT: '0',
      NODE_ENV: 'production',
      ARBOR_WORKERS: String(workers),
      // The token server is on, as for a registry that trusts Arbor (the registry.token case).
      ARBOR_REGISTRY_SERVICE: REGISTRY_SERVICE,
      // ARBOR_READ_CACHE=false in the bench's environment measures Arbor without its cache.
      ...(process.env.ARBOR_READ_CACHE ? { ARBOR_READ_CACHE: process.env.ARBOR_READ_CACHE } : {}),
      // The load is a few identities in closed loops, which the cost budgets exist to refuse
      // (the STS case sends every exchange as one identity): off unless the bench's
      // environment says otherwise; `--only=budgets` measures what they cost.
      ARBOR_BUDGETS: process.env.ARBOR_BUDGETS ?? 'off',
      ...(tls ? { ARBOR_TLS_CERT_FILE: tls.certFile, ARBOR_TLS_KEY_FILE: tls.keyFile } : {}),
      // A case's own settings (bench/tracing-bench.ts: the OTEL_* variables).
      ...env,
    },
    `${url}/readyz`,
    url,
    () => rmSync(dataDir, { recursive: true, force: true }),
    // The image's node flags (Dockerfile ENTRYPOINT, npm start) first, so that a flag given
    // after them takes V8's last word: `BENCH_ARBOR_NODE_ARGS` in the bench's environment
    // (more node or V8 flags for every Arbor process of the run, for an A/B of a flag the
    // image might take; `--heap-growing-percent=0` is V8's own default), then the caller's.
    [
      ...imageNodeFlags(semiSpaceMB),
      ...(process.env.BENCH_ARBOR_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      ...nodeArgs,
    ],
    tls?.ca,
  );
}

/**
 * The node:http + pg baseline, running the SQL captured in `sqlFile`; `nodeArgs` (e.g.
 * `--cpu-prof`, for bench/profile.ts) go before the script.
 */
export async function startBaseline(
  databaseUrl: string,
  sqlFile: string,
  nodeArgs: string[] = [],
): Promise<Child> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  return start(
    'baseline',
    ['bench/baseline-server.ts'],
    { PORT: String(port), DATABASE_URL: databaseUrl, BENCH_SQL: sqlFile, NODE_ENV: 'production' },
    `${url}/healthz`,
    url,
    () => {},
    nodeArgs,
  );
}

/**
 * The bare node:http + node:http2 servers of bench/bare-server.ts, answering the bytes in
 * `answersFile`: `url` is HTTP/1.1, `h2Url` HTTP/2 (h2c).
 */
export async function startBare(answersFile: string): Promise<Child & { h2Url: string }> {
  const port = await freePort();
  const h2Port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = await start(
    'bare',
    ['bench/bare-server.ts'],
    { PORT: String(port), H2_PORT: String(h2Port), BARE_ANSWERS: answersFile },
    `${url}/healthz`,
    url,
  );
  return { ...child, h2Url: `http://127.0.0.1:${h2Port}` };
}
