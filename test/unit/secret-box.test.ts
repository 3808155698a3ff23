import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretBox, secretKeyId } from '../../src/auth/secret-box.js';
import { generateSecretKey, loadSecretKeys, parseSecretKeys } from '../../src/auth/secret-keys.js';

const key = () => {
  const k = randomBytes(32);
  return { kid: secretKeyId(k), key: k };
};

test('secret box: seals to text that names its key and opens only in its context', (t) => {
  const k = key();
  const box = new SecretBox([k]);
  const sealed = box.seal('hunter2', 'ctx-a');
  t.true(sealed.startsWith(`arbor-secret:v1:${k.kid}:`));
  t.false(sealed.includes('hunter2'));
  t.not(box.seal('hunter2', 'ctx-a'), sealed, 'a fresh IV each time');
  t.is(box.open(sealed, 'ctx-a'), 'hunter2');
  t.throws(() => box.open(sealed, 'ctx-b'));
  // One bit of the ciphertext flipped in the bytes, not in the text: the last base64url
  // character of 23 bytes carries two padding bits, so editing the text there can leave
  // the bytes as they were (1 run in 16 once did).
  const cut = sealed.lastIndexOf(':') + 1;
  const body = Buffer.from(sealed.slice(cut), 'base64url');
  for (const at of [0, body.length - 1]) {
    const bytes = Buffer.from(body);
    bytes[at]! ^= 1;
    t.throws(() => box.open(sealed.slice(0, cut) + bytes.toString('base64url'), 'ctx-a'));
  }
  t.throws(() => box.open('plain text', 'ctx-a'));
  t.is(SecretBox.kidOf(sealed), k.kid);
  t.is(SecretBox.kidOf('plain'), undefined);
});

test('secret box: the first key seals, every key opens, a missing key does not', (t) => {
  const [oldKey, newKey] = [key(), key()];
  const before = new SecretBox([oldKey]).seal('s', 'c');
  const both = new SecretBox([newKey!, oldKey!]);
  t.is(both.open(before, 'c'), 's');
  t.is(SecretBox.kidOf(both.seal('s', 'c')), newKey!.kid);
  t.throws(() => new SecretBox([newKey!]).open(before, 'c'), { message: /no secret key/ });
  t.throws(() => new SecretBox([]));
  t.throws(() => new SecretBox([{ kid: 'x', key: randomBytes(16) }]));
});

test('secret keys: from ARBOR_SECRET_KEY in order, or generated once into the directory', async (t) => {
  const a = randomBytes(32).toString('base64');
  const b = randomBytes(32).toString('base64url');
  t.deepEqual(
    parseSecretKeys(` ${a} , ${b} `).map((k) => k.kid),
    [secretKeyId(Buffer.from(a, 'base64')), secretKeyId(Buffer.from(b, 'base64'))],
  );
  t.throws(() => parseSecretKeys('c2hvcnQ='), { message: /key 1 must be 32 bytes/ });
  const dir = mkdtempSync(join(tmpdir(), 'arbor-keys-'));
  try {
    const first = await loadSecretKeys(undefined, join(dir, 'k'), 1000);
    t.is(first.length, 1);
    t.deepEqual(await loadSecretKeys(undefined, join(dir, 'k'), 2000), first);
    const newer = await generateSecretKey(join(dir, 'k'), 3000);
    const both = await loadSecretKeys(undefined, join(dir, 'k'));
    t.deepEqual(
      both.map((k) => k.kid),
      [newer, first[0]!.kid],
    );
    t.is(readdirSync(join(dir, 'k')).length, 2);
    t.deepEqual(
      (await loadSecretKeys(a, join(dir, 'unused'))).map((k) => k.kid),
      [secretKeyId(Buffer.from(a, 'base64'))],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
