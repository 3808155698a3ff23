import {
  chmodSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { writeSecretFile } from '../../src/auth/secret-file.js';
import { CredentialStore } from '../../src/cli/auth-credentials.js';

/** Secrets are written 0600, never through what was at the path. */

const scratch = () => mkdtempSync(join(tmpdir(), 'arbor-secret-file-'));

test('an existing 0644 file is replaced by a 0600 one', (t) => {
  const dir = scratch();
  const path = join(dir, 'backup.tar');
  writeFileSync(path, 'old');
  chmodSync(path, 0o644);
  writeSecretFile(path, 'private key');
  t.is(statSync(path).mode & 0o777, 0o600);
  t.is(readFileSync(path, 'utf8'), 'private key');
  // Nothing left beside it.
  t.deepEqual(readdirSync(dir), ['backup.tar']);
});

test('a symbolic link at the path is replaced; its target is untouched', (t) => {
  const dir = scratch();
  const victim = join(dir, 'victim');
  writeFileSync(victim, 'do not touch');
  chmodSync(victim, 0o644);
  const path = join(dir, 'backup.tar');
  symlinkSync(victim, path);
  writeSecretFile(path, 'private key');
  t.false(lstatSync(path).isSymbolicLink());
  t.is(statSync(path).mode & 0o777, 0o600);
  t.is(readFileSync(victim, 'utf8'), 'do not touch');
  t.is(statSync(victim).mode & 0o777, 0o644);
});

test('the credentials file is written 0600 through a temporary name nobody can plant', async (t) => {
  const dir = scratch();
  const path = join(dir, 'arbor', 'credentials.json');
  const victim = join(dir, 'victim');
  writeFileSync(victim, 'do not touch');
  const store = new CredentialStore(path);
  await store.put('http://127.0.0.1:1', { token: 't1', expiry: '', identity: 'i', audience: 'a' });
  // The names the store used to write through (its pid, `.tmp`), planted as links now.
  for (const name of [`credentials.json.${process.pid}.tmp`, '.credentials.json.tmp'])
    symlinkSync(victim, join(dir, 'arbor', name));
  await store.put('http://127.0.0.1:2', { token: 't2', expiry: '', identity: 'i', audience: 'a' });
  t.is(readFileSync(victim, 'utf8'), 'do not touch');
  t.false(lstatSync(path).isSymbolicLink());
  t.is(statSync(path).mode & 0o777, 0o600);
  t.is((await store.get('http://127.0.0.1:2'))?.token, 't2');
  t.is((await store.get('http://127.0.0.1:1'))?.token, 't1');
});

test('no temporary file is left behind, even when the rename fails', (t) => {
  const dir = scratch();
  writeSecretFile(join(dir, 'f'), 'one');
  writeSecretFile(join(dir, 'f'), 'two');
  t.deepEqual(readdirSync(dir), ['f']);
  // A directory at the path: the rename fails, and the temporary file goes with it.
  t.throws(() => writeSecretFile(dir, 'x'));
  t.throws(() => writeSecretFile(join(dir, 'f', 'g'), 'x'));
  t.deepEqual(readdirSync(dir), ['f']);
});
