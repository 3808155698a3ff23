import test from 'ava';
import { loadConfig } from '../../src/config.js';
import { decodeToken, encodeToken, parseLsn } from '../../src/db/consistency-token.js';

test('an LSN reads as PostgreSQL prints it, and a token carries it unchanged', (t) => {
  t.is(parseLsn('0/0'), 0n);
  t.is(parseLsn('16/B374D848'), (0x16n << 32n) | 0xb374d848n);
  t.is(parseLsn('FFFFFFFF/FFFFFFFF'), 2n ** 64n - 1n);
  for (const lsn of [0n, 1n, 0x3000060n, (0x16n << 32n) | 0xb374d848n, 2n ** 64n - 1n])
    t.is(decodeToken(encodeToken(lsn)), lsn);
  t.throws(() => parseLsn('16B374D848'));
});

test('anything but a well-formed token decodes to nothing (the read goes to the primary)', (t) => {
  for (const bogus of [
    '',
    'nonsense',
    '1.',
    '1.zz',
    '2.10',
    '1.-1',
    '1.10000000000000000',
    '1.1 2',
    '01.10',
  ])
    t.is(decodeToken(bogus), undefined, bogus);
  t.is(decodeToken(undefined), undefined);
});

test('DATABASE_READ_URL takes several URLs, multi-host ones whole', (t) => {
  const c = loadConfig({
    DATABASE_READ_URL:
      'postgres://u@a:5432,b:5432/arbor?target_session_attrs=prefer-standby, postgresql://u@c/arbor',
  });
  t.deepEqual(c.databaseReadUrls, [
    'postgres://u@a:5432,b:5432/arbor?target_session_attrs=prefer-standby',
    'postgresql://u@c/arbor',
  ]);
  t.is(c.readReplicaMaxLagMs, 1000);
  t.deepEqual(loadConfig({}).databaseReadUrls, []);
  t.is(loadConfig({ ARBOR_READ_REPLICA_MAX_LAG_MS: '250' }).readReplicaMaxLagMs, 250);
  const err = t.throws(() => loadConfig({ DATABASE_READ_URL: 'mysql://secret@x/y' }));
  t.regex(err.message, /^DATABASE_READ_URL must be postgres:\/\/ URLs/);
  // A URL may hold a password: never repeated in the message.
  t.false(err.message.includes('secret'));
});
