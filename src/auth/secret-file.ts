import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fsyncSync,
  openSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** O_NOFOLLOW where the platform has it (not on Windows, where O_EXCL is enough). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

/**
 * Write a file only its owner may read (keys, credentials, a backup holding keys): into a
 * fresh temporary file in the same directory (a random name, created exclusively, 0600, no
 * symbolic link followed), synced, then renamed over `path`. So whatever was at `path`
 * before, a wider file or a symbolic link, is replaced, never written through: the new file
 * is 0600 and a link's target is untouched. A reader sees the old file or the new, whole.
 * @throws the filesystem's error (the temporary file is removed).
 */
export function writeSecretFile(path: string, data: string | Uint8Array): void {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(12).toString('hex')}.tmp`);
  const fd = openSync(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW,
    0o600,
  );
  try {
    try {
      writeFileSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      /* already renamed or gone */
    }
    throw e;
  }
}
