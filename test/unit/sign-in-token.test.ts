import { hash } from 'node:crypto';
import test from 'ava';
import { SignInToken } from '../../src/auth/sign-in-token.js';

const digest = (s: string) => hash('sha256', s, 'buffer');

test('sign-in token: 256 random bits, accepted by its digest until it expires', (t) => {
  const now = 1_000_000;
  const a = SignInToken.generate(now, 60_000);
  const b = SignInToken.generate(now, 60_000);
  t.regex(a.token, /^arbor-dev-[A-Za-z0-9_-]{43}$/);
  t.not(a.token, b.token);
  t.true(a.accepts(digest(a.token), now));
  t.true(a.accepts(digest(a.token), now + 59_999));
  t.false(a.accepts(digest(a.token), now + 60_000), 'expired');
  t.false(a.accepts(digest(b.token), now), "another run's token");
  t.false(a.accepts(digest(`${a.token} `), now));
});
