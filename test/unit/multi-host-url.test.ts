import test from 'ava';
import { isRpcError } from '../../src/core/rpc-error.js';
import { translateDbError } from '../../src/db/errors.js';
import { parseMultiHostUrl } from '../../src/db/multi-host.js';
import { redactUrl } from '../../src/startup-error.js';

test('multi-host: each host gets the credentials, database and other parameters', (t) => {
  const m = parseMultiHostUrl(
    'postgres://u:p%40ss@db-a:5433,db-b,[::1]:6000/arbor?sslmode=require&target_session_attrs=read-write',
  );
  t.deepEqual(m, {
    hostUrls: [
      'postgres://u:p%40ss@db-a:5433/arbor?sslmode=require',
      'postgres://u:p%40ss@db-b:5432/arbor?sslmode=require',
      'postgres://u:p%40ss@[::1]:6000/arbor?sslmode=require',
    ],
    labels: ['db-a:5433', 'db-b:5432', '[::1]:6000'],
    readWrite: true,
  });
});

test('multi-host: one host without target_session_attrs is left to the driver', (t) => {
  t.is(parseMultiHostUrl('postgres://u:p@db:5432/arbor?sslmode=disable'), undefined);
  t.is(parseMultiHostUrl('postgresql://db/arbor'), undefined);
});

test('multi-host: one host with read-write is still checked; any is accepted', (t) => {
  t.like(parseMultiHostUrl('postgres://db/arbor?target_session_attrs=read-write'), {
    hostUrls: ['postgres://db:5432/arbor'],
    readWrite: true,
  });
  t.like(parseMultiHostUrl('postgres://a,b/arbor?target_session_attrs=any'), { readWrite: false });
  t.like(parseMultiHostUrl('postgres://a,b/arbor'), { readWrite: false });
});

test('multi-host: unsupported session attributes and empty hosts are refused', (t) => {
  t.throws(() => parseMultiHostUrl('postgres://a,b/arbor?target_session_attrs=standby'), {
    message: /target_session_attrs=standby is not supported/,
  });
  t.throws(() => parseMultiHostUrl('postgres://a,,b/arbor'), { message: /empty host/ });
});

test('errors: what a failover throws answers UNAVAILABLE, never INTERNAL', (t) => {
  const cases: Array<Record<string, unknown>> = [
    { code: '25006', message: 'cannot execute INSERT in a read-only transaction' },
    { code: '57P01', message: 'terminating connection due to administrator command' },
    { code: '57P02', message: 'crash shutdown' },
    { code: '57P03', message: 'the database system is starting up' },
    { code: '08001', message: 'no read-write server among a:1, b:2' },
    { code: '08006', message: 'connection failure' },
    { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' },
    { code: 'ECONNRESET', message: 'read ECONNRESET' },
    { message: 'Connection terminated unexpectedly' },
    { message: 'Client was closed and is not queryable' },
    { message: 'Knex: Timeout acquiring a connection. The pool is probably full.' },
  ];
  for (const c of cases) {
    const mapped = translateDbError(Object.assign(new Error(String(c.message)), c));
    t.true(isRpcError(mapped) && mapped.code === 14, JSON.stringify(c));
  }
});

test('multi-host: start-up errors show the hosts, never the password', (t) => {
  t.is(
    redactUrl('postgres://arbor:s3cret@a:5432,b:5433/arbor?target_session_attrs=read-write'),
    'postgres://arbor:***@a:5432,b:5433/arbor',
  );
  t.is(redactUrl('postgres://arbor@a,b/arbor'), 'postgres://arbor@a,b/arbor');
});
