import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import test from 'ava';

/**
 * The console as it is built (`node scripts/console/build.mjs`, what `npm run build` runs):
 * its first load stays under 200 KB compressed, its page holds no inline script or style
 * (the CSP would refuse them), and its sources never hand the DOM an HTML string.
 */
const LIMIT = 200 * 1024;
let out: string;

test.before(() => {
  out = mkdtempSync(join(tmpdir(), 'arbor-console-bundle-'));
  execFileSync(process.execPath, ['scripts/console/build.mjs', out], { stdio: 'inherit' });
});

test.after.always(() => rmSync(out, { recursive: true, force: true }));

test('console bundle: the first load is under 200 KB gzipped', (t) => {
  const files = readdirSync(out);
  t.deepEqual(files.sort(), ['app.css', 'app.js', 'index.html']);
  const sizes = Object.fromEntries(
    files.map((f) => [f, gzipSync(readFileSync(join(out, f)), { level: 9 }).length]),
  );
  const total = Object.values(sizes).reduce((a, b) => a + b, 0);
  t.log(`gzipped: ${JSON.stringify(sizes)}, ${total} bytes in all`);
  t.true(total < LIMIT, `${total} bytes`);
});

test('console bundle: index.html loads its script and style from files only', (t) => {
  const html = readFileSync(join(out, 'index.html'), 'utf8');
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
  t.true(scripts.length > 0);
  for (const [, attrs, body] of scripts) {
    t.regex(attrs ?? '', /\bsrc="\/console\/[a-z0-9.-]+\.js"/);
    t.is((body ?? '').trim(), '');
  }
  t.notRegex(html, /<style\b/i);
  t.notRegex(html, /\sstyle=/i);
  t.notRegex(html, /\son[a-z]+=/i);
  t.notRegex(html, /https?:\/\//i, 'no third-party origin');
});

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : [p];
  });
}

test('console sources: tenant data never reaches the DOM as HTML', (t) => {
  const files = sources('console/src');
  t.true(files.length > 5);
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    for (const banned of [
      'dangerouslySetInnerHTML',
      'innerHTML',
      'outerHTML',
      'insertAdjacentHTML',
      'document.write',
      'eval(',
      'new Function',
    ])
      t.false(text.includes(banned), `${f} uses ${banned}`);
  }
});
