import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import test from 'ava';
import { ConfigError, environmentSchema, loadConfig } from '../../src/config.js';
import { loadReconcilerConfig } from '../../src/reconciler/reconciler-config.js';

test('config: nothing set gives the documented defaults', (t) => {
  const c = loadConfig({});
  t.is(c.port, 8080);
  // Nothing set is a development run: loopback only.
  t.is(c.host, '127.0.0.1');
  t.is(c.databaseUrl, undefined);
  t.is(c.issuerUrl, 'http://localhost:8080');
  t.is(c.logLevel, 'info');
  t.is(c.metricsPort, 9464);
  t.deepEqual(c.corsOrigins, []);
  t.false(c.allowInsecureIssuers);
  t.true(c.signingKeysDir.endsWith('/.data/keys'));
  t.true(Object.isFrozen(c));
});

test('config: only NODE_ENV unset, development or test may be a development run, which listens on loopback unless HOST is set', (t) => {
  for (const env of ['', 'development', 'test']) {
    const c = loadConfig({ NODE_ENV: env });
    t.true(c.devSignIn, env);
    t.is(c.host, '127.0.0.1', env);
  }
  for (const env of ['production', 'prod', 'staging', 'Production', 'dev']) {
    const c = loadConfig({ NODE_ENV: env });
    t.false(c.devSignIn, env);
    t.is(c.host, '0.0.0.0', env);
  }
  t.is(loadConfig({ HOST: '0.0.0.0' }).host, '0.0.0.0');
  t.true(loadConfig({ HOST: '0.0.0.0' }).devSignIn);
  for (const other of [
    { ARBOR_ADMIN_TOKEN: 'an-admin-token-0123456789' },
    { DATABASE_URL: 'postgres://u@h/db' },
    { KUBERNETES_SERVICE_HOST: '10.0.0.1' },
  ]) {
    t.false(loadConfig(other).devSignIn);
    t.is(loadConfig(other).host, '0.0.0.0');
  }
});

test('config: an empty variable is the same as an unset one', (t) => {
  const c = loadConfig({ PORT: '', LOG_LEVEL: '', DATABASE_URL: '', ARBOR_ADMIN_TOKEN: '' });
  t.is(c.port, 8080);
  t.is(c.logLevel, 'info');
  t.is(c.adminToken, undefined);
});

test('config: every boolean takes true/false and 1/0, in the API and the reconciler alike', (t) => {
  for (const [raw, want] of [
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ] as const) {
    t.is(loadConfig({ ARBOR_ALLOW_INSECURE_ISSUERS: raw }).allowInsecureIssuers, want);
    t.is(loadReconcilerConfig({ ARBOR_LEADER_ELECTION: raw }).leaderElection, want);
    t.is(loadReconcilerConfig({ ARBOR_CLUSTER_TRUST: raw }).clusterTrust, want);
  }
  for (const bad of ['yes', 'TRUE', 'on']) {
    t.throws(() => loadConfig({ ARBOR_ALLOW_INSECURE_ISSUERS: bad }), {
      instanceOf: ConfigError,
      message: `ARBOR_ALLOW_INSECURE_ISSUERS must be true or false (or 1 or 0), not "${bad}"`,
    });
    t.throws(() => loadReconcilerConfig({ ARBOR_LEADER_ELECTION: bad }), {
      message: /^ARBOR_LEADER_ELECTION must be true or false/,
    });
  }
});

test('config: a bad LOG_LEVEL is a configuration error naming the variable and the choices', (t) => {
  t.throws(() => loadConfig({ LOG_LEVEL: 'verbose' }), {
    instanceOf: ConfigError,
    message:
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, not "verbose"',
  });
  t.is(loadConfig({ LOG_LEVEL: 'debug' }).logLevel, 'debug');
});

test('config: ports, URLs and numbers are checked and named', (t) => {
  t.throws(() => loadConfig({ PORT: '80x' }), {
    message: 'PORT must be a port number (0-65535), not "80x"',
  });
  t.throws(() => loadConfig({ PORT: '70000' }), {
    message: 'PORT must be a port number (0-65535), not "70000"',
  });
  t.throws(() => loadConfig({ ARBOR_ISSUER_URL: 'not a url' }), {
    message: 'ARBOR_ISSUER_URL must be a URL, not "not a url"',
  });
  t.throws(() => loadReconcilerConfig({ ARBOR_RESYNC_SECONDS: '5' }), {
    message: 'ARBOR_RESYNC_SECONDS must be at least 10, not "5"',
  });
  t.is(loadConfig({ PORT: '9000' }).issuerUrl, 'http://localhost:9000');
  t.is(
    loadConfig({ ARBOR_ISSUER_URL: 'https://iam.example.com//' }).issuerUrl,
    'https://iam.example.com',
  );
  t.is(loadReconcilerConfig({ ARBOR_RESYNC_SECONDS: '60' }).resyncMs, 60_000);
});

test('config: secrets are never repeated in an error', (t) => {
  const e = t.throws(() => loadConfig({ ARBOR_ADMIN_TOKEN: 'short-secret' }));
  t.is(e.message, 'ARBOR_ADMIN_TOKEN must be at least 16 characters');
  const d = t.throws(() => loadConfig({ DATABASE_URL: 'mysql://u:hunter2@db/x' }));
  t.is(d.message, 'DATABASE_URL must be a postgres:// URL');
});

test('config: CORS origins are a list of origins or *', (t) => {
  t.deepEqual(
    loadConfig({ ARBOR_CORS_ORIGINS: 'https://a.example.com, http://localhost:3000/' }).corsOrigins,
    ['https://a.example.com', 'http://localhost:3000'],
  );
  t.deepEqual(loadConfig({ ARBOR_CORS_ORIGINS: '*' }).corsOrigins, ['*']);
  t.throws(() => loadConfig({ ARBOR_CORS_ORIGINS: 'https://a.example.com/path' }), {
    message: /^ARBOR_CORS_ORIGINS must be \* or a comma-separated list of origins/,
  });
});

test('config: ARBOR_TLS_CERT_FILE and ARBOR_TLS_KEY_FILE are set together or not at all', (t) => {
  t.is(loadConfig({}).tls, undefined);
  for (const one of [
    { ARBOR_TLS_CERT_FILE: '/tls/tls.crt' },
    { ARBOR_TLS_KEY_FILE: '/tls/tls.key' },
    { ARBOR_TLS_CERT_FILE: '/tls/tls.crt', ARBOR_TLS_KEY_FILE: '' },
  ]) {
    t.throws(() => loadConfig(one), {
      instanceOf: ConfigError,
      message: 'ARBOR_TLS_CERT_FILE and ARBOR_TLS_KEY_FILE are set together',
    });
  }
  const c = loadConfig({ ARBOR_TLS_CERT_FILE: 'tls/tls.crt', ARBOR_TLS_KEY_FILE: '/tls/tls.key' });
  // Paths are resolved once, so a later chdir cannot point a reload elsewhere.
  t.deepEqual(c.tls, { certFile: resolve('tls/tls.crt'), keyFile: '/tls/tls.key' });
  t.true(Object.isFrozen(c.tls));
});

test('config: with TLS the default issuer is https on the same port; a set one wins', (t) => {
  const files = { ARBOR_TLS_CERT_FILE: '/tls/tls.crt', ARBOR_TLS_KEY_FILE: '/tls/tls.key' };
  t.is(loadConfig(files).issuerUrl, 'https://localhost:8080');
  t.is(loadConfig({ ...files, PORT: '8443' }).issuerUrl, 'https://localhost:8443');
  t.is(
    loadConfig({ ...files, ARBOR_ISSUER_URL: 'https://iam.example.com' }).issuerUrl,
    'https://iam.example.com',
  );
  t.is(loadConfig({ PORT: '8443' }).issuerUrl, 'http://localhost:8443');
});

test('config: every variable of the schema has a row in the README configuration table', (t) => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const rows = new Set([...readme.matchAll(/^\| `([A-Z0-9_]+)`/gm)].map((m) => m[1]));
  const missing = Object.keys(environmentSchema.shape).filter((name) => !rows.has(name));
  t.deepEqual(missing, []);
});
