import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { freePort } from '../helpers/process.js';

/**
 * The README's walk, pasted as written: every `sh` block of "A walk through the API" (and
 * its subsections) and of "gRPC", in order, in one bash with `set -euo pipefail`, against
 * a fresh `arbor serve` that the walk itself starts. Blocks marked
 * `<!-- walk: skip (why) -->` on the line before are left out (a browser, a cluster).
 * `arbor` is on the PATH as after set-up (a shim running this checkout's source).
 */
const REPO = process.cwd();
const GRPCURL_DIR = join(
  process.env.ARBOR_CACHE ?? join(homedir(), '.cache', 'arbor'),
  'grpcurl',
  'v1.9.3',
);

/** The `sh` blocks of the sections whose `## ` heading is one of `sections`. */
export function walkBlocks(markdown: string, sections: readonly string[]): string[] {
  const blocks: string[] = [];
  let inSection = false;
  let previous = '';
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('## ')) inSection = sections.includes(line.slice(3).trim());
    if (inSection && line === '```sh') {
      const end = lines.indexOf('```', i + 1);
      if (!previous.startsWith('<!-- walk: skip')) blocks.push(lines.slice(i + 1, end).join('\n'));
      i = end;
    }
    if (line.trim() !== '') previous = line;
  }
  return blocks;
}

test('readme: the walk runs as pasted against a fresh server', async (t) => {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const grpc = existsSync(join(GRPCURL_DIR, 'grpcurl'));
  if (!grpc) {
    const why = `no grpcurl in ${GRPCURL_DIR} (scripts/grpcurl/build.sh)`;
    // grpcurl is a CI tool (.ci/run builds it): under CI a missing one fails the walk rather
    // than letting it go green without the README's gRPC blocks (as needTool does elsewhere).
    if (process.env.CI === 'true') {
      t.fail(`${why}: CI never leaves the gRPC blocks out`);
      return;
    }
    t.log(`${why}: gRPC blocks left out`);
  }
  const blocks = walkBlocks(readme, ['A walk through the API', ...(grpc ? ['gRPC'] : [])]);
  t.true(blocks.length >= 5, `found ${blocks.length} blocks`);

  const dir = mkdtempSync(join(tmpdir(), 'arbor-walk-'));
  try {
    // A shell in "this checkout": node_modules resolves (the walk imports jose), files land here.
    symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'arbor'),
      `#!/bin/sh\nexec "${process.execPath}" --import=tsx "${join(REPO, 'src/main.ts')}" "$@"\n`,
      { mode: 0o755 },
    );
    const script = [
      'set -euo pipefail',
      // The walk leaves its server running in the background; the test stops it.
      "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT",
      ...blocks,
    ].join('\n');
    const port = await freePort();
    const child = spawn('bash', ['-c', script], {
      cwd: dir,
      env: {
        PATH: [bin, ...(grpc ? [GRPCURL_DIR] : []), process.env.PATH ?? ''].join(':'),
        HOME: dir,
        XDG_CONFIG_HOME: dir,
        PORT: String(port),
        DATA_DIR: join(dir, '.data'),
        // The walk's own `mktemp -d` lands under this one, removed with it.
        TMPDIR: dir,
        // Other tests run beside this one: no shared metrics port.
        METRICS_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 5 * 60_000);
    const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    clearTimeout(timer);
    // The walk runs in the temporary directory it makes (its first line), not in `dir`.
    const walkDir = readdirSync(dir).find((f) => existsSync(join(dir, f, 'arbor.log')));
    const log = walkDir ? readFileSync(join(dir, walkDir, 'arbor.log'), 'utf8') : '';
    const transcript = `--- stdout\n${out}\n--- stderr\n${err}\n--- arbor.log (tail)\n${log.slice(-3000)}`;
    t.is(code, 0, transcript);

    // Every google.rpc.Status the walk printed is the one it shows on purpose (code 9).
    const codes = [...out.matchAll(/"code":\s*(\d+)/g)].map((m) => Number(m[1]));
    t.deepEqual([...new Set(codes)], [9], transcript);
    t.regex(out, /refused, exit code 3/);
    // The CLI parts did what the comments say.
    t.regex(out, /^acme {2}\(2 groups\)\n├── platform\n└── security\n/m, 'arbor tree');
    t.regex(
      out,
      /identity: {2}laptop [0-9a-f]{40}\/[0-9a-f]{16}\n/,
      'arbor whoami after the STS login',
    );
    t.regex(out, /viewer at acme/);
    // The STS token listed the org it was granted (a viewer binding at acme).
    t.regex(out, /"groups":\[\{"uid":"[0-9a-f]{40}","name":"acme"/);
    if (grpc) t.regex(out, /"description": "new"/, 'the gRPC UpdateGroup');
    t.false(/\n\s+at /.test(err), 'no stack traces');
    // Nothing the walk wrote (tokens, keys, the log) is in the directory it was started in.
    t.true(walkDir !== undefined, 'the walk ran in its own temporary directory');
    for (const f of ['laptop.token', 'laptop.jwks.json', 'test-token.json', 'arbor.log'])
      t.false(existsSync(join(dir, f)), f);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
