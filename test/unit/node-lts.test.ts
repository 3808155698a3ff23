import { readFileSync } from 'node:fs';
import test from 'ava';

const read = (p: string) => readFileSync(new URL(`../../${p}`, import.meta.url), 'utf8');

test('node lts: the image runs the exact Node release that CI also tests on', (t) => {
  const image = /^ARG NODE_VERSION=(\d+\.\d+\.\d+)$/m.exec(read('Dockerfile'))?.[1];
  const ci = /^readonly NODE_LTS_VERSION=(\d+\.\d+\.\d+)$/m.exec(
    read('scripts/node-lts/install.sh'),
  )?.[1];
  t.truthy(image);
  t.is(image, ci);
  t.is(Number(image!.split('.')[0]) % 2, 0, 'an even (LTS) major');
  t.notRegex(read('Dockerfile'), /FROM node:20/);
});
