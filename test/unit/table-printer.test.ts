import test from 'ava';
import { renderTable, tableWidth } from '../../src/cli/printers/table-printer.js';
import type { Column } from '../../src/cli/resource-kinds.js';

const UID = 'bc6a5d2c58ab6979cea2d411a882383e58744580/eebfcca88294f453';
const columns: Column[] = [
  { header: 'NAME', value: (i) => String(i.name), whole: true },
  { header: 'UID', value: (i) => String(i.uid), uid: true },
  { header: 'CAPABILITIES', value: (i) => String(i.caps), list: true },
  { header: 'DESCRIPTION', value: (i) => String(i.description) },
];
const items = [
  {
    name: 'registry.pull',
    uid: UID,
    caps: 'repo.list,repo.blobs.get,tag.list',
    description: 'pull images from the repos of the group and below',
  },
  {
    name: 'registry.push',
    uid: `${UID}/0123456789abcdef`,
    caps: 'repo.create,repo.update,repo.list,repo.delete',
    description: 'push images',
  },
];

test('table: with no limit (piped) nothing is shortened', (t) => {
  const out = renderTable(items, columns, Number.POSITIVE_INFINITY);
  for (const i of items) {
    t.true(out.includes(i.name));
    t.true(out.includes(i.uid));
    t.true(out.includes(i.caps));
    t.true(out.includes(i.description));
  }
  t.false(out.includes('…'));
});

test('table: narrow, names stay whole and two similar names stay two names', (t) => {
  const out = renderTable(items, columns, 40);
  const names = out
    .split('\n')
    .slice(1, 3)
    .map((l) => l.split(/\s+/)[0]);
  t.deepEqual(names, ['registry.pull', 'registry.push']);
});

test('table: too wide, the uid column goes first and the rest keep their room', (t) => {
  const out = renderTable(items, columns, 150);
  const [header, first] = out.split('\n');
  // Without the uids everything fits whole: nothing else is shortened.
  t.false(header!.includes('UID'));
  t.false(out.includes(UID.slice(0, 8)));
  t.true(first!.includes('repo.list,repo.blobs.get,tag.list'));
  t.true(first!.includes('pull images from the repos of the group and below'));
  t.true(header!.length <= 150);
  // With room for everything the uid stays.
  t.true(renderTable(items, columns, 200).includes(UID));
  // Narrower still: then text gives way, and a list by whole items.
  const narrow = renderTable(items, columns, 70).split('\n')[1]!;
  t.regex(narrow, /^registry\.pull\s+repo\.list,(repo\.blobs\.get,)?\+\d\s/);
  t.false(narrow.includes('bc6a5d'));
});

test('table: the width is COLUMNS on a terminal, the terminal otherwise, unlimited off one', (t) => {
  t.is(tableWidth({ isTTY: true, columns: 120 }, { COLUMNS: '200' }), 200);
  t.is(tableWidth({ isTTY: true, columns: 120 }, {}), 120);
  t.is(tableWidth({ isTTY: true, columns: 120 }, { COLUMNS: 'wide' }), 120);
  t.is(tableWidth({ isTTY: false, columns: 120 }, { COLUMNS: '50' }), Number.POSITIVE_INFINITY);
  t.is(tableWidth({}, {}), Number.POSITIVE_INFINITY);
});
