import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface ArborProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process wrote to stdout and stderr so far. */
  logs(): string;
  /** Resolves once a log line matches (or rejects when the process exits first). */
  waitForLog(re: RegExp, ms?: number): Promise<void>;
  /** Polls `path` until it answers `status`. */
  waitForStatus(path: string, status: number, ms?: number): Promise<void>;
  exited: Promise<number | null>;
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
  const until = async (ok: () => Promise<boolean>, what: string, ms: number) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (await ok()) return;
      if (child.exitCode !== null) throw new Error(`arbor exited (${child.exitCode}) ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out ${what}\n${logs}`);
  };
  return {
    child,
    url,
    logs: () => logs,
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
    kill: () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}
