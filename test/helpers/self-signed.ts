import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Why selfSigned() answers undefined: the reason a test that needs it gives (needTool). */
export const OPENSSL_MISSING = 'no openssl on PATH to make a certificate (apt-get install openssl)';

export interface SelfSigned {
  key: Buffer;
  cert: Buffer;
}

/**
 * A fresh self-signed P-256 certificate for `localhost` and 127.0.0.1, made with openssl
 * (each call a new key); undefined where openssl is absent, so callers can skip.
 */
export function selfSigned(cn = 'localhost'): SelfSigned | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        `/CN=${cn}`,
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
