import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { Logger } from 'pino';
import { ConfigError, type TlsFiles } from './config.js';

/** A checked key and certificate (chain), as `tls.createServer` and `setSecureContext` take them. */
export interface TlsCredentials {
  key: Buffer;
  cert: Buffer;
  /** When the first (leaf) certificate of the chain expires. */
  notAfter: Date;
  /** SHA-256 fingerprint of the leaf certificate: public, so logs may show which one serves. */
  fingerprint: string;
}

const CERT = 'ARBOR_TLS_CERT_FILE';
const KEY = 'ARBOR_TLS_KEY_FILE';
const CERT_PEM = /-----BEGIN CERTIFICATE-----/;
// An encrypted key would need a passphrase, which there is no place for: it is refused.
const KEY_PEM = /-----BEGIN (?:RSA |EC )?PRIVATE KEY-----/;

/**
 * How often the files are checked for a replacement. Rotation is not urgent (cert-manager
 * renews a third of a lifetime early), and a stat of two files is nothing.
 */
export const TLS_POLL_MS = 10_000;
/** A cert and its key are rarely replaced at the same instant: one reload for the pair. */
const SETTLE_MS = 500;

function readPem(variable: string, file: string, label: RegExp, what: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError(`${variable} cannot be read: ${file} (${code})`);
  }
  // Only ever say what is missing: the contents (a private key) are never repeated.
  if (!label.test(bytes.toString('latin1')))
    throw new ConfigError(`${variable} must be a PEM file with ${what}: ${file} has none`);
  return bytes;
}

/**
 * Read and check the API port's TLS files: both PEM, the certificate parses, the key is
 * the certificate's, and Node's TLS accepts the pair. Used at start (a bad file stops the
 * process) and on every reload (a bad file keeps the previous pair serving).
 * @throws ConfigError naming the variable at fault, never echoing a file's contents.
 */
export function readTlsFiles(files: TlsFiles): TlsCredentials {
  const cert = readPem(CERT, files.certFile, CERT_PEM, 'a CERTIFICATE');
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch {
    throw new ConfigError(`${CERT} must be a PEM certificate: ${files.certFile} does not parse`);
  }
  const key = readPem(KEY, files.keyFile, KEY_PEM, 'an unencrypted PRIVATE KEY');
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError(`${KEY} must be a PEM private key: ${files.keyFile} does not parse`);
  }
  if (!leaf.checkPrivateKey(privateKey))
    throw new ConfigError(
      `${KEY} must be the key of the certificate in ${CERT}: ${files.keyFile} is not`,
    );
  try {
    createSecureContext({ key, cert });
  } catch (e) {
    // OpenSSL's reason (`ee key too small`, …) names a property, never the bytes.
    throw new ConfigError(`${CERT} and ${KEY} are not usable for TLS: ${(e as Error).message}`);
  }
  return {
    key,
    cert,
    notAfter: new Date(leaf.validTo),
    fingerprint: leaf.fingerprint256,
  };
}

/**
 * Call `changed` when either file is replaced. A stat poll rather than an inotify watch:
 * the kubelet updates a mounted Secret by swapping a symlink above the files, which a watch
 * on the file path misses and a stat (which follows links) sees. Never keeps the process alive.
 * @returns a function that stops watching.
 */
export function watchTlsFiles(
  files: TlsFiles,
  changed: () => void,
  intervalMs = TLS_POLL_MS,
): () => void {
  let settle: NodeJS.Timeout | undefined;
  const onStat = (now: Stats, before: Stats) => {
    if (now.mtimeMs === before.mtimeMs && now.ino === before.ino && now.size === before.size)
      return;
    clearTimeout(settle);
    settle = setTimeout(changed, SETTLE_MS).unref();
  };
  const paths = [files.certFile, files.keyFile];
  for (const p of paths) watchFile(p, { interval: intervalMs, persistent: false }, onStat);
  return () => {
    clearTimeout(settle);
    for (const p of paths) unwatchFile(p, onStat);
  };
}

/** What serves the credentials: the API listener (`ArborListener#setSecureContext`). */
export interface SecureContextTarget {
  setSecureContext(c: TlsCredentials): void;
}

/**
 * Keep `target` serving what `files` hold now: reload on SIGHUP and when the files change
 * (cert-manager rotates certificates in place). New handshakes get the new pair; open
 * connections keep theirs. A pair that fails the checks is logged and the previous one
 * keeps serving, so a half-written rotation never takes the port down.
 * @returns a function that stops reloading.
 */
export function reloadTls(
  target: SecureContextTarget,
  files: TlsFiles,
  log: Logger,
  intervalMs = TLS_POLL_MS,
): () => void {
  const reload = (reason: string) => {
    try {
      const c = readTlsFiles(files);
      target.setSecureContext(c);
      log.info(
        { reason, fingerprint: c.fingerprint, notAfter: c.notAfter.toISOString() },
        'TLS certificate reloaded',
      );
    } catch (e) {
      log.warn(
        { reason, error: (e as Error).message },
        'TLS reload failed; still serving the previous certificate',
      );
    }
  };
  const onHangup = () => reload('SIGHUP');
  process.on('SIGHUP', onHangup);
  const unwatch = watchTlsFiles(files, () => reload('files changed'), intervalMs);
  return () => {
    process.off('SIGHUP', onHangup);
    unwatch();
  };
}
