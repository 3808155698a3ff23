import { randomBytes } from 'node:crypto';
import { compose } from '../compose.js';
import { adminTarget, statusMessage } from './admin-target.js';
import { loadConfig } from '../config.js';
import { generateSecretKey } from '../auth/secret-keys.js';

/**
 * `arbor secret-key new`: with ARBOR_SECRET_KEY set, print a fresh key to put first in
 * it; otherwise write one into the key directory, where it seals from the next start.
 */
export async function newSecretKeyCommand(): Promise<number> {
  const config = loadConfig();
  if (config.secretKey !== undefined) {
    process.stdout.write(`${randomBytes(32).toString('base64')}\n`);
    process.stderr.write(
      'put this key first in ARBOR_SECRET_KEY, keep the old ones after it, restart, ' +
        'then run `arbor secret-key reseal` and drop the old keys\n',
    );
    return 0;
  }
  const kid = await generateSecretKey(config.secretKeysDir);
  process.stdout.write(`${kid}\n`);
  return 0;
}

/**
 * `arbor secret-key reseal`: seal every stored secret with the current key (plain text
 * from older versions, or sealed by a key being retired). Every start of the server does
 * the same; this is for doing it without one.
 */
export async function resealSecretsCommand(opts: { api?: string } = {}): Promise<number> {
  const report = (r: { resealed: number; unreadable: string[] }) => {
    process.stdout.write(`resealed: ${r.resealed}\n`);
    if (r.unreadable.length === 0) return 0;
    process.stderr.write(`cannot open (key missing): ${r.unreadable.join(', ')}\n`);
    return 1;
  };
  const target = await adminTarget(opts.api);
  if (target.kind === 'api') {
    // The server seals with its own keys: a key made by `secret-key new` counts once it restarts.
    const { data, error, response } = await target.client.POST('/admin/v1/secrets:reseal');
    if (data) return report(data);
    process.stderr.write(`arbor: secret-key reseal: ${statusMessage(error, response)}\n`);
    return 1;
  }
  const arbor = await compose(target.config, { role: 'secret-key reseal' });
  try {
    // compose() has already resealed what it found; this pass reports what is left.
    return report(await arbor.services.identityProviders.resealClientSecrets());
  } finally {
    await arbor.close();
  }
}
