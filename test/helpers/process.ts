import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

/**
 * The one helper for Arbor as a real process (`arbor serve`, `arbor reconcile`, …) in e2e
 * tests, and for the loopback ports those tests hand out.
 */

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export interface ArborProcess {
  child: ChildProcess;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** `env.PORT` as given (NaN when the command serves nothing). */
  port: number;
  /** Everything the process wrote to stdout and stderr so far. */
  logs(): string;
  /** The JSON (pino) log lines so far, parsed. */
  lines(): Array<Record<string, unknown>>;
  /** Resolves once a log line matches (or rejects when the process exits first). */
  waitForLog(re: RegExp, ms?: number): Promise<void>;
  /** Polls `path` until it answers `status` (or rejects when the process exits first). */
  waitForStatus(path: string, status: number, ms?: number): Promise<void>;
  /** The exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Send `signal` (SIGTERM unless told) unless it has exited, and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** SIGKILL unless it has exited; for `finally` blocks. */
  kill(): void;
}

/** `arbor <args>` as a real process (through tsx), on `env.PORT`. */
export function startArbor(args: string[], env: Record<string, string>): ArborProcess {
  const child = spawn(process.execPath, ['--import=tsx', 'src/main.ts', ...args], {
    env: { ...process.env, LOG_LEVEL: 'info', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  child.stdout!.on('data', (d: Buffer) => (logs += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (logs += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  const url = `http://127.0.0.1:${env.PORT}`;
  const running = () => child.exitCode === null && child.signalCode === null;
  const until = async (ok: () => Promise<boolean>, what: string, ms: number) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (await ok()) return;
      if (!running()) throw new Error(`arbor exited (${child.exitCode}) ${what}\n${logs}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out ${what}\n${logs}`);
  };
  return {
    child,
    url,
    port: Number(env.PORT),
    logs: () => logs,
    lines: () =>
      logs
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    exited,
    waitForLog: (re, ms = 120_000) =>
      until(() => Promise.resolve(re.test(logs)), `waiting for ${re}`, ms),
    waitForStatus: (path, status, ms = 120_000) =>
      until(
        () =>
          fetch(url + path).then(
            (r) => r.status === status,
            () => false,
          ),
        `waiting for ${path} to answer ${status}`,
        ms,
      ),
    stop: (signal = 'SIGTERM') => {
      if (running()) child.kill(signal);
      return exited;
    },
    kill: () => {
      if (running()) child.kill('SIGKILL');
    },
  };
}

/**
 * `arbor serve` on a free loopback port with one worker and quiet logs, resolved once
 * `/readyz` answers 200. `env` overrides any of those.
 */
export async function startArborProcess(
  env: Record<string, string>,
  readyMs = 120_000,
): Promise<ArborProcess> {
  const arbor = startArbor(['serve'], {
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    LOG_LEVEL: 'warn',
    // One process per server (tests start replicas themselves).
    ARBOR_WORKERS: '1',
    ...env,
  });
  try {
    await arbor.waitForStatus('/readyz', 200, readyMs);
  } catch (e) {
    arbor.kill();
    throw e;
  }
  return arbor;
}
