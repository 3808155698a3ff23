import { spawn } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  cpSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { freePort } from '../helpers/process.js';

/**
 * `npm start` compiles only what changed, to start fast: `prestart` runs
 * `npm run build`, which is tsc's build mode with its tsbuildinfo in dist/. The second start
 * of an unchanged checkout writes nothing under dist/; an edited source is compiled again.
 * The test works on a copy of the package (sources, configs, this checkout's node_modules
 * linked) so that it never rewrites the dist/ other tests or the bench use.
 */

/** `npm start` in `dir` until `/readyz` answers 200, then SIGTERM; resolves with its output. */
async function npmStart(dir: string, dataDir: string): Promise<string> {
  const port = await freePort();
  // Its own process group: npm runs `node dist/src/main.js` through a shell, and the whole
  // group gets the signal.
  const child = spawn('npm', ['start'], {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      npm_config_cache: join(dir, '.npm'),
      npm_config_update_notifier: 'false',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      ARBOR_ADMIN_TOKEN: 'npm-start-admin-token-0123456789',
      ARBOR_ISSUER_URL: `http://127.0.0.1:${port}`,
      ARBOR_SHUTDOWN_DELAY_SECONDS: '0',
      ARBOR_WORKERS: '1',
      LOG_LEVEL: 'warn',
      METRICS_PORT: '0',
    },
  });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<void>((ok) => child.once('close', () => ok()));
  try {
    const deadline = Date.now() + 8 * 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}):\n${out}`);
      if (Date.now() > deadline) throw new Error(`not ready:\n${out}`);
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGTERM');
    await exited;
  }
  return out;
}

const mtime = (f: string) => statSync(f).mtimeMs;

test('npm start compiles once: an unchanged second start writes nothing under dist/, an edit is compiled', async (t) => {
  const root = process.cwd();
  const dir = mkdtempSync(join(tmpdir(), 'arbor-npm-start-'));
  const data = mkdtempSync(join(tmpdir(), 'arbor-npm-start-data-'));
  try {
    for (const f of ['package.json', 'tsconfig.json', 'tsconfig.build.json'])
      copyFileSync(join(root, f), join(dir, f));
    cpSync(join(root, 'src'), join(dir, 'src'), { recursive: true });
    cpSync(
      join(root, 'scripts', 'pglite-template.mjs'),
      join(dir, 'scripts', 'pglite-template.mjs'),
    );
    cpSync(join(root, 'console'), join(dir, 'console'), { recursive: true });
    cpSync(join(root, 'scripts', 'console'), join(dir, 'scripts', 'console'), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));

    await npmStart(dir, data);
    const info = join(dir, 'dist', 'tsconfig.build.tsbuildinfo');
    const main = join(dir, 'dist', 'src', 'main.js');
    const edited = join(dir, 'dist', 'src', 'core', 'rpc-code.js');
    // The embedded database's template (src/db/pglite-template.ts), made by the build.
    const template = join(dir, 'dist', 'pglite-template');
    const [key] = readdirSync(template);
    const state = () => ({
      info: mtime(info),
      main: mtime(main),
      edited: mtime(edited),
      template: readdirSync(template),
      templateFiles: mtime(join(template, key!, 'PG_VERSION')),
      // The console's bundle (scripts/console/build.mjs) is not made again either.
      console: mtime(join(dir, 'dist', 'console', 'app.js')),
    });
    const first = state();

    await npmStart(dir, data);
    t.deepEqual(state(), first, 'the second start rewrote dist/');

    // A real edit is still compiled: the check is freshness, not "never build".
    appendFileSync(join(dir, 'src', 'core', 'rpc-code.ts'), '\n// edited by npm-start.test\n');
    await npmStart(dir, data);
    t.regex(readFileSync(edited, 'utf8'), /edited by npm-start\.test/);
    t.not(mtime(info), first.info);
    // And so is an edit of the console.
    appendFileSync(join(dir, 'console', 'app.css'), '\n/* edited by npm-start.test */\n');
    await npmStart(dir, data);
    t.not(mtime(join(dir, 'dist', 'console', 'app.js')), first.console);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(data, { recursive: true, force: true });
  }
});
