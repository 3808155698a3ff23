import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { pino } from 'pino';
import { ConfigError, type TlsFiles } from '../../src/config.js';
import {
  readTlsFiles,
  reloadTls,
  watchTlsFiles,
  type TlsCredentials,
} from '../../src/tls-files.js';
import { OPENSSL_MISSING, selfSigned } from '../helpers/self-signed.js';
import { needTool } from '../helpers/need-tool.js';

const pair = selfSigned();
const maybe = needTool(test, 'openssl', pair ? undefined : OPENSSL_MISSING);

/** A directory with `tls.crt` and `tls.key` holding what is given, removed after the test. */
function files(t: { teardown(fn: () => void): void }, cert: string | Buffer, key: string | Buffer) {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-tls-files-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const f: TlsFiles = { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
  writeFileSync(f.certFile, cert);
  writeFileSync(f.keyFile, key);
  return f;
}

const otherKey = () =>
  generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  }).privateKey;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

maybe('tls files: a matching pair is read with the leaf fingerprint and expiry', (t) => {
  const f = files(t, pair!.cert, pair!.key);
  const c = readTlsFiles(f);
  t.deepEqual(c.cert, pair!.cert);
  t.deepEqual(c.key, pair!.key);
  t.regex(c.fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
  // openssl made it for one day.
  const left = c.notAfter.getTime() - Date.now();
  t.true(left > 0 && left <= 2 * 86_400_000, c.notAfter.toISOString());
});

test('tls files: a file that cannot be read is named with its variable', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-tls-none-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const missing = { certFile: join(dir, 'no.crt'), keyFile: join(dir, 'no.key') };
  t.throws(() => readTlsFiles(missing), {
    instanceOf: ConfigError,
    message: `ARBOR_TLS_CERT_FILE cannot be read: ${missing.certFile} (ENOENT)`,
  });
  t.throws(() => readTlsFiles({ ...missing, certFile: dir }), {
    message: `ARBOR_TLS_CERT_FILE cannot be read: ${dir} (EISDIR)`,
  });
});

maybe('tls files: a missing key is named after a good certificate', (t) => {
  const f = files(t, pair!.cert, pair!.key);
  const keyFile = `${f.keyFile}.gone`;
  t.throws(() => readTlsFiles({ ...f, keyFile }), {
    instanceOf: ConfigError,
    message: `ARBOR_TLS_KEY_FILE cannot be read: ${keyFile} (ENOENT)`,
  });
});

test('tls files: what is not PEM is refused without repeating a byte of it', (t) => {
  const secret = 'hunter2-not-a-certificate';
  const f = files(t, secret, secret);
  const e = t.throws(() => readTlsFiles(f), { instanceOf: ConfigError });
  t.is(
    e.message,
    `ARBOR_TLS_CERT_FILE must be a PEM file with a CERTIFICATE: ${f.certFile} has none`,
  );
  const broken = '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n';
  t.throws(() => readTlsFiles(files(t, broken, secret)), {
    message: /^ARBOR_TLS_CERT_FILE must be a PEM certificate: .* does not parse$/,
  });
});

maybe('tls files: a key slot holding no usable private key is refused', (t) => {
  // A certificate where the key belongs.
  const f = files(t, pair!.cert, pair!.cert);
  t.throws(() => readTlsFiles(f), {
    message: `ARBOR_TLS_KEY_FILE must be a PEM file with an unencrypted PRIVATE KEY: ${f.keyFile} has none`,
  });
  // A key that needs a passphrase there is no place for.
  const encrypted = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'x' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  }).privateKey;
  t.throws(() => readTlsFiles(files(t, pair!.cert, encrypted)), {
    message: /^ARBOR_TLS_KEY_FILE must be a PEM file with an unencrypted PRIVATE KEY/,
  });
});

maybe("tls files: a key that is not the certificate's is refused, its bytes unsaid", (t) => {
  const key = otherKey();
  const f = files(t, pair!.cert, key);
  const e = t.throws(() => readTlsFiles(f), { instanceOf: ConfigError });
  t.is(
    e.message,
    `ARBOR_TLS_KEY_FILE must be the key of the certificate in ARBOR_TLS_CERT_FILE: ${f.keyFile} is not`,
  );
  const body = key.split('\n')[1]!;
  t.false(e.message.includes(body));
});

maybe('tls files: a replaced pair is noticed once, and no more once stopped', async (t) => {
  const f = files(t, pair!.cert, pair!.key);
  let changes = 0;
  const stop = watchTlsFiles(f, () => changes++, 20);
  try {
    await sleep(100); // the first stat is the baseline
    const next = selfSigned('rotated')!;
    writeFileSync(f.certFile, next.cert);
    writeFileSync(f.keyFile, next.key);
    for (let i = 0; i < 100 && changes === 0; i++) await sleep(50);
    await sleep(700); // past the settle time: a second call would have come by now
    t.is(changes, 1);
  } finally {
    stop();
  }
  writeFileSync(f.certFile, pair!.cert);
  await sleep(700);
  t.is(changes, 1);
});

maybe('tls reload: SIGHUP serves the new pair; a bad pair keeps the old one serving', (t) => {
  const f = files(t, pair!.cert, pair!.key);
  const served: TlsCredentials[] = [];
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) });
  const listeners = process.listenerCount('SIGHUP');
  // A long poll: only the signal reloads in this test.
  const stop = reloadTls({ setSecureContext: (c) => served.push(c) }, f, log, 60_000);
  try {
    const next = selfSigned('rotated')!;
    writeFileSync(f.certFile, next.cert);
    writeFileSync(f.keyFile, next.key);
    process.emit('SIGHUP', 'SIGHUP');
    t.is(served.length, 1);
    t.deepEqual(served[0]!.cert, next.cert);
    t.is(lines.at(-1)!.msg, 'TLS certificate reloaded');
    t.is(lines.at(-1)!.fingerprint, served[0]!.fingerprint);

    // Half a rotation (the new certificate, the old key): refused, logged, nothing swapped.
    writeFileSync(f.certFile, pair!.cert);
    process.emit('SIGHUP', 'SIGHUP');
    t.is(served.length, 1);
    t.is(lines.at(-1)!.msg, 'TLS reload failed; still serving the previous certificate');
    t.regex(String(lines.at(-1)!.error), /^ARBOR_TLS_KEY_FILE must be the key of the certificate/);
  } finally {
    stop();
  }
  t.is(process.listenerCount('SIGHUP'), listeners, 'stopping removes the handler');
});
