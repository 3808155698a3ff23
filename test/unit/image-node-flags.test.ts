import test from 'ava';
import { readFileSync } from 'node:fs';
import { imageNodeFlags } from '../../bench/procs.js';

const root = new URL('../../', import.meta.url);
const text = (path: string) => readFileSync(new URL(path, root), 'utf8');

/** The node flags of a command line (`node --a --b dist/src/main.js …`): what precedes the script. */
function flagsOf(argv: string[]): string[] {
  return argv.slice(1, argv.indexOf('dist/src/main.js'));
}

test('the image, npm start and the bench run Arbor with the same node flags', (t) => {
  // The memory the docs and the chart's requests state was measured with these flags: a
  // change to one of the three places that the others do not follow would go unmeasured.
  const entry = /^ENTRYPOINT (\[.*\])$/m.exec(text('Dockerfile'))?.[1];
  t.truthy(entry, 'the Dockerfile has an exec-form ENTRYPOINT');
  const image = flagsOf(JSON.parse(entry!) as string[]);
  const start = (JSON.parse(text('package.json')) as { scripts: { start: string } }).scripts.start;
  t.true(image.length > 0);
  t.deepEqual(flagsOf(start.split(/\s+/)), image);
  t.deepEqual(imageNodeFlags(), image);
});
