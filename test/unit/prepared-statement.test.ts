import test from 'ava';
import { Statement } from '../../src/db/prepared.js';

test('statement: its name follows its text, so one name never means two statements', (t) => {
  const a = new Statement('SELECT 1 WHERE $1::int = 1');
  t.is(new Statement('SELECT 1 WHERE $1::int = 1').name, a.name);
  t.not(new Statement('SELECT 2 WHERE $1::int = 1').name, a.name);
  t.regex(a.name, /^arbor_[0-9a-f]{20}$/);
});

test('statement: parameters must be $1..$n in order, each once, and no ? placeholders', (t) => {
  t.throws(() => new Statement('SELECT $2, $1'));
  t.throws(() => new Statement('SELECT $1, $1'));
  t.throws(() => new Statement('SELECT ? '));
  t.notThrows(() => new Statement('SELECT $1, $2, $3'));
});
