import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import test from 'ava';

/**
 * The repository speaks for itself: a clone has no issue tracker, so code, tests, docs,
 * benchmarks and the console say the reason or the feature in words, never a tracker
 * number. Every tracked file under these paths is read; a hit is reported as file:line.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PATHS = ['src', 'test', 'docs', 'console', 'scripts', 'bench', 'README.md', 'BENCHMARKS.md'];
const SELF = 'test/unit/no-tracker-numbers.test.ts';
const TRACKER = [/\bissues? #?[0-9]+\b/i, /\(#[0-9]+\)/];

test('no file names a tracker number instead of saying why', (t) => {
  const files = execFileSync('git', ['ls-files', '-z', '--', ...PATHS], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
    .split('\0')
    .filter((f) => f !== '' && f !== SELF);
  t.true(files.length > 100, 'git ls-files found the repository');

  const hits: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(`${ROOT}/${file}`, 'utf8');
    } catch {
      continue; // deleted in the working tree, or not a regular file
    }
    if (text.includes('\0')) continue; // binary
    text.split('\n').forEach((line, i) => {
      if (TRACKER.some((re) => re.test(line))) hits.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  t.deepEqual(hits, [], `say the reason in words instead:\n${hits.join('\n')}`);
});
