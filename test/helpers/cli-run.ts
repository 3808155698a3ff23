import { spawn } from 'node:child_process';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `arbor <args>` as a process (this checkout's source through tsx) with exactly `env`
 * (plus PATH). `onUrl` gets the sign-in address the CLI prints (the browser step) and may
 * answer a line for its standard input (the headless paste); without it stdin is closed.
 */
export function runArbor(
  args: string[],
  env: Record<string, string>,
  onUrl?: (url: string) => Promise<string | undefined>,
): Promise<CliRun> {
  const child = spawn(process.execPath, ['--import=tsx', 'src/main.ts', ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let seen = false;
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString();
    const m = /^\s+(http\S+\/authorize\?\S+)\n/m.exec(stderr);
    if (m?.[1] && !seen && onUrl) {
      seen = true;
      onUrl(m[1]).then(
        (line) => {
          if (line !== undefined) child.stdin.end(`${line}\n`);
        },
        (e: unknown) => {
          stderr += `\n[test] the browser step failed: ${String(e)}\n`;
          child.kill();
        },
      );
    }
  });
  if (!onUrl) child.stdin.end();
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })),
  );
}

/** The browser at a provider that signs in at once: follow its redirect to the CLI. */
export async function authorize(url: string): Promise<string> {
  const res = await fetch(url, { redirect: 'manual' });
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) throw new Error(`authorize answered ${res.status}`);
  return location;
}

/** The whole browser step of a login with a loopback redirect. */
export async function browser(url: string): Promise<undefined> {
  await fetch(await authorize(url));
  return undefined;
}
