import test from 'ava';
import type { GrpcTestServer } from '../helpers/grpc-server.js';
import type { TestIssuer } from '../helpers/oidc-issuer.js';
import { unsignedToken } from '../helpers/sts.js';
import {
  ACCESS,
  EXCHANGE,
  ID_TOKEN,
  ISSUER,
  fullToken,
  rawToken,
  refusal,
  startOAuthWorld,
  stopOAuthWorld,
  workloadToken,
} from '../helpers/oauth-world.js';

/** Attacks on the token endpoint: forged and foreign subject tokens, form-encoding abuse, oversized inputs (docs/oauth.md); the world is test/helpers/oauth-world.ts. */
let s: GrpcTestServer;
let issuer: TestIssuer;
let ci: string;
let stranger: string;

test.before(async () => {
  ({ s, issuer, ci, stranger } = await startOAuthWorld());
});
test.after.always(stopOAuthWorld);

test('subject tokens: forged, expired, foreign or mistyped ones are invalid_grant', async (t) => {
  const id = { subject_token_type: ID_TOKEN, identity: ci };
  t.deepEqual(
    await refusal({
      ...id,
      subject_token: unsignedToken({ iss: issuer.url, sub: 'sub-ci', aud: ISSUER }),
    }),
    { error: 'invalid_grant', status: 400 },
  );
  const expired = await issuer.mint(
    { sub: 'sub-ci', aud: ISSUER },
    { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 },
  );
  t.deepEqual(await refusal({ ...id, subject_token: expired }), {
    error: 'invalid_grant',
    status: 400,
  });
  t.deepEqual(await refusal({ ...id, subject_token: await workloadToken('sub-stranger') }), {
    error: 'invalid_grant',
    status: 400,
  });
  const full = await fullToken();
  // An Arbor token presented as an OIDC token is not one; a tampered API token is nothing.
  t.deepEqual(await refusal({ ...id, subject_token: full }), {
    error: 'invalid_grant',
    status: 400,
  });
  const [h, p] = full.split('.');
  const tampered = `${h}.${p}.${'A'.repeat(86)}`;
  t.deepEqual(await refusal({ subject_token: tampered, subject_token_type: ACCESS }), {
    error: 'invalid_grant',
    status: 400,
  });
  // The static admin token is no API token to narrow.
  t.deepEqual(
    await refusal({
      subject_token: 'test-admin-token-0123456789abcdef',
      subject_token_type: ACCESS,
    }),
    { error: 'invalid_grant', status: 400 },
  );
  t.deepEqual(
    await refusal({ subject_token: full, subject_token_type: ACCESS, identity: stranger }),
    { error: 'invalid_grant', status: 400 },
  );
  t.deepEqual(
    await refusal({ subject_token: await workloadToken(), subject_token_type: ID_TOKEN }),
    { error: 'invalid_request', status: 400 },
  );
});

test('the form: bounded, form-encoded only, no repeats, no actor, every refusal typed', async (t) => {
  const ok = { grant_type: EXCHANGE, subject_token: 'x', subject_token_type: ACCESS };
  const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
  const cases: Array<[string, Awaited<ReturnType<typeof rawToken>>, string, number]> = [
    ['json', await rawToken(JSON.stringify(ok), 'application/json'), 'invalid_request', 400],
    ['no grant', await rawToken(form({ subject_token: 'x' })), 'invalid_request', 400],
    [
      'other grant',
      await rawToken(form({ ...ok, grant_type: 'password' })),
      'unsupported_grant_type',
      400,
    ],
    [
      'repeated grant',
      await rawToken(`${form(ok)}&grant_type=${encodeURIComponent(EXCHANGE)}`),
      'invalid_request',
      400,
    ],
    [
      'actor without its type',
      await rawToken(form({ ...ok, actor_token: 'y' })),
      'invalid_request',
      400,
    ],
    [
      'actor that does not verify',
      await rawToken(form({ ...ok, actor_token: 'y', actor_token_type: ACCESS })),
      'invalid_grant',
      400,
    ],
    ['bad escape', await rawToken(`${form(ok)}&scope=%zz`), 'invalid_request', 400],
    ['bad utf-8', await rawToken(`${form(ok)}&scope=%ff`), 'invalid_request', 400],
    ['raw control', await rawToken(`${form(ok)}&scope=a\u0000b`), 'invalid_request', 400],
    ['unknown parameter', await rawToken(form({ ...ok, password: 'p' })), 'invalid_request', 400],
    [
      'huge token',
      await rawToken(form({ ...ok, subject_token: 'x'.repeat(9000) })),
      'invalid_request',
      400,
    ],
    [
      'huge body',
      await rawToken(form({ ...ok, scope: 'x'.repeat(20_000) })),
      'invalid_request',
      400,
    ],
    [
      'many scopes',
      await rawToken(
        form({ ...ok, scope: Array.from({ length: 65 }, (_, i) => `c${i}`).join(' ') }),
      ),
      'invalid_scope',
      400,
    ],
    [
      'many resources',
      await rawToken(`${form(ok)}${'&resource=a'.repeat(17)}`),
      'invalid_target',
      400,
    ],
    [
      'foreign audience',
      await rawToken(form({ ...ok, audience: 'https://elsewhere.example' })),
      'invalid_target',
      400,
    ],
    [
      'subject type',
      await rawToken(form({ ...ok, subject_token_type: 'urn:x' })),
      'invalid_request',
      400,
    ],
  ];
  for (const [label, res, error, status] of cases) {
    t.is(res.status, status, label);
    t.is(res.body.error, error, `${label}: ${JSON.stringify(res.body)}`);
    t.is(typeof res.body.error_description, 'string', label);
    t.is(res.headers.get('cache-control'), 'no-store', label);
  }
  const inQuery = await fetch(`${s.url}/oauth2/token?grant_type=${encodeURIComponent(EXCHANGE)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form(ok),
  });
  t.is(inQuery.status, 400);
});
