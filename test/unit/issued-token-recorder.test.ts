import test from 'ava';
import { IssuedTokenRecorder } from '../../src/auth/issued-token-recorder.js';
import type { SignedApiToken } from '../../src/auth/token-issuer.js';

const token = (jti: string): SignedApiToken => ({
  jti,
  subject: 'a'.repeat(40),
  parents: [],
  scope: undefined,
  groups: undefined,
  actor: undefined,
  iat: 1,
  exp: 3601,
});

test('the buffer is bounded: beyond it a token is counted as dropped, never kept', (t) => {
  const r = new IssuedTokenRecorder(2);
  r.issued(token('a'));
  r.issued(token('b'));
  r.issued(token('c'));
  t.is(r.pending, 2);
  t.deepEqual(r.stats, { recorded: 2, dropped: 1 });
  t.deepEqual(
    r.drain().map((x) => x.jti),
    ['a', 'b'],
  );
  t.is(r.pending, 0);
});

test('a batch put back after a failed write keeps within the bound, oldest first', (t) => {
  const r = new IssuedTokenRecorder(3);
  r.issued(token('a'));
  r.issued(token('b'));
  const batch = r.drain();
  r.issued(token('c'));
  r.issued(token('d'));
  r.restore(batch);
  t.deepEqual(
    r.drain().map((x) => x.jti),
    ['a', 'c', 'd'],
  );
  t.is(r.stats.dropped, 1);
});
