import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export interface ArborProcess {
  url: string;
  child: ChildProcess;
  logs(): string;
  /** Send `signal` and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** `arbor serve` as a real child process on a free loopback port, ready when this resolves. */
export async function startArborProcess(
  env: Record<string, string>,
  readyMs = 120_000,
): Promise<ArborProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import=tsx', 'src/main.ts', 'serve'], {
    // One process per server (tests start replicas themselves), no shared metrics port.
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      METRICS_PORT: '0',
      ARBOR_WORKERS: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  child.stdout!.on('data', (d: Buffer) => (logs += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (logs += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + readyMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${logs}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not become ready: ${logs}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    child,
    logs: () => logs,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
