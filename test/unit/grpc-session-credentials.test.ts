import test from 'ava';
import type { Authenticator } from '../../src/auth/authenticator.js';
import type { Principal } from '../../src/auth/principal.js';
import { unauthenticated } from '../../src/core/rpc-error.js';
import { authenticateCall } from '../../src/grpc/authn.js';

/** Tokens a..z name identities; each call is counted (the token is checked on every call). */
function authenticator(): Authenticator & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    authenticate(token: string): Promise<Principal> {
      calls.push(token);
      if (!/^[a-z]$/.test(token)) return Promise.reject(unauthenticated('the token is not valid'));
      return Promise.resolve(Object.freeze({ kind: 'identity', uid: `org/${token}` }));
    },
  };
}

test('a session that changes its credentials is the new caller on the next call', async (t) => {
  const auth = authenticator();
  const session = {};
  const a = await authenticateCall(auth, 'Bearer a', 'r1', session);
  const b = await authenticateCall(auth, 'Bearer b', 'r2', session);
  const a2 = await authenticateCall(auth, 'Bearer a', 'r3', session);
  t.like(a, { kind: 'identity', uid: 'org/a', via: { door: 'grpc', requestId: 'r1' } });
  t.like(b, { kind: 'identity', uid: 'org/b', via: { door: 'grpc', requestId: 'r2' } });
  t.like(a2, { kind: 'identity', uid: 'org/a', via: { door: 'grpc', requestId: 'r3' } });
  // Every call is authenticated (an expired or refused token fails on its next call).
  t.deepEqual(auth.calls, ['a', 'b', 'a']);
  // The same fingerprint of the same token as without a session.
  const plain = await authenticateCall(auth, 'Bearer a', 'r4');
  t.is(a.via?.credential, plain.via?.credential);
});

test('a refused token is refused on every call of its session', async (t) => {
  const auth = authenticator();
  const session = {};
  for (let i = 0; i < 2; i++)
    await t.throwsAsync(authenticateCall(auth, 'Bearer not-valid', `r${i}`, session), {
      message: /not valid/,
    });
  await t.throwsAsync(authenticateCall(auth, 'Basic eDp5', 'r', session), {
    message: /Bearer/,
  });
  t.deepEqual(auth.calls, ['not-valid', 'not-valid']);
});
