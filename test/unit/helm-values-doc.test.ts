import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import test from 'ava';

// The chart README's values reference is generated from values.yaml's comments; CI runs the
// generator's --check, so a value added without regenerating the README fails.
const script = resolve('scripts/helm/values-doc.mjs');

test('helm values reference: the README is what values.yaml says', (t) => {
  const r = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
  t.is(r.status, 0, r.stderr);
  const readme = readFileSync('deploy/helm/arbor/README.md', 'utf8');
  for (const key of ['database.readUrlSecret.name', 'nodeSelector', 'networkPolicy.enabled'])
    t.true(readme.includes(`\`${key}\``), key);
});

test('helm values reference: a value missing from the README fails the check', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-values-doc-'));
  cpSync('deploy/helm/arbor/values.yaml', join(dir, 'deploy/helm/arbor/values.yaml'));
  cpSync('deploy/helm/arbor/README.md', join(dir, 'deploy/helm/arbor/README.md'));
  writeFileSync(
    join(dir, 'deploy/helm/arbor/values.yaml'),
    `${readFileSync(join(dir, 'deploy/helm/arbor/values.yaml'), 'utf8')}\n# A new value.\nnewValue: 1\n`,
  );
  const r = spawnSync(process.execPath, [script, '--check'], { cwd: dir, encoding: 'utf8' });
  t.is(r.status, 1);
  t.regex(r.stderr, /README\.md is stale/);
  execFileSync(process.execPath, [script], { cwd: dir });
  t.true(readFileSync(join(dir, 'deploy/helm/arbor/README.md'), 'utf8').includes('`newValue`'));
});
