import test from 'ava';
import { RpcError } from '../../src/core/rpc-error.js';
import {
  claimMatchAccepts,
  issuerProblem,
  jwksProblem,
  patternProblem,
} from '../../src/resources/identities/claim-match.js';
import {
  identitySchemas,
  resolveExpiration,
} from '../../src/resources/identities/identity-input.js';
import { parseInput } from '../../src/resources/validate.js';

const DAY = 24 * 60 * 60 * 1000;

test('issuer: https only, unless insecure issuers are allowed', (t) => {
  t.is(issuerProblem('https://token.actions.githubusercontent.com', false), undefined);
  t.is(issuerProblem('https://issuer.example/path', false), undefined);
  t.is(issuerProblem('http://issuer.example', false), 'must be an https URL');
  t.is(issuerProblem('http://issuer.example', true), undefined);
  t.is(issuerProblem('ftp://issuer.example', true), 'must be an http or https URL');
  t.is(issuerProblem('issuer.example', false), 'must be an https URL');
  t.is(issuerProblem('https://u:p@issuer.example', false), 'must not carry credentials');
  t.is(issuerProblem('https://issuer.example/#x', false), 'must not have a query or fragment');
  t.is(issuerProblem('https://issuer.example/?', false), 'must not have a query or fragment');
});

test('pattern: must compile as RE2, be non-empty and at most 512 characters', (t) => {
  t.is(patternProblem('repo:acme/.*:ref:refs/heads/main'), undefined);
  t.is(patternProblem(''), 'must not be empty');
  t.is(patternProblem(`[${'a'.repeat(510)}]`), undefined);
  t.is(patternProblem(`[${'a'.repeat(511)}]`), 'must be at most 512 characters');
  t.regex(patternProblem('(')!, /^must be a valid RE2 regular expression/);
  t.regex(patternProblem('[z-a]')!, /^must be a valid RE2 regular expression/);
});

test('jwks: a key set of public keys, each with kty', (t) => {
  t.is(jwksProblem('{"keys":[{"kty":"RSA","n":"x","e":"AQAB"}]}'), undefined);
  t.regex(jwksProblem('not json')!, /JSON Web Key Set/);
  t.regex(jwksProblem('[]')!, /JSON Web Key Set/);
  t.regex(jwksProblem('{"keys":{}}')!, /JSON Web Key Set/);
  t.is(jwksProblem('{"keys":[]}'), 'must hold at least one key');
  t.is(jwksProblem('{"keys":[1]}'), 'key 0 must be a JSON object');
  t.is(jwksProblem('{"keys":[{"kty":"EC"},{"kty":""}]}'), 'key 1 must have a "kty"');
  t.is(jwksProblem('{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}'), 'key 0 must be a public key');
});

test('claimMatchAccepts: issuer, subject, audience and extra claims', (t) => {
  const cm = {
    issuer: 'https://i.example',
    subjectPattern: 'repo:acme/.*',
    audience: 'arbor',
    claims: { ref: 'main' },
  };
  const claims = {
    iss: 'https://i.example',
    sub: 'repo:acme/app',
    aud: ['x', 'arbor'],
    ref: 'main',
  };
  t.true(claimMatchAccepts(cm, claims));
  t.false(claimMatchAccepts(cm, { ...claims, iss: 'https://i.example/' }));
  t.false(claimMatchAccepts(cm, { ...claims, sub: 'repo:evil/acme/app' }));
  t.false(claimMatchAccepts(cm, { ...claims, aud: 'other' }));
  t.false(claimMatchAccepts(cm, { ...claims, ref: 'dev' }));
  t.false(claimMatchAccepts(cm, { ...claims, sub: 7 }));
  t.true(
    claimMatchAccepts(
      { issuer: 'https://i.example', subject: 's' },
      { iss: 'https://i.example', sub: 's' },
    ),
  );
});

test('expiration: default 365 days after creation; past and beyond are refused', (t) => {
  const created = new Date('2030-01-01T00:00:00.000Z');
  const now = new Date('2030-01-02T00:00:00.000Z');
  t.is(resolveExpiration(undefined, created, now).getTime(), created.getTime() + 365 * DAY);
  t.is(
    resolveExpiration('2030-06-01T00:00:00Z', created, now).toISOString(),
    '2030-06-01T00:00:00.000Z',
  );
  const past = t.throws(() => resolveExpiration('2030-01-01T12:00:00Z', created, now), {
    instanceOf: RpcError,
  });
  t.is(past?.message, 'Invalid argument: staticKeys.expirationTime: must be in the future');
  t.throws(() => resolveExpiration('2031-01-02T00:00:00Z', created, now), {
    message: /365 days/,
  });
});

test('schemas: every violation of a create body is reported with its dotted path', (t) => {
  const { create } = identitySchemas(false);
  const e = t.throws(
    () =>
      parseInput(create, {
        name: 'ok',
        claimMatch: { issuer: 'http://x', issuerPattern: '(', claims: { a: 'b' } },
      }),
    { instanceOf: RpcError },
  );
  const bad = e?.details.find((d) => d['@type'].endsWith('BadRequest'));
  const got = bad && 'fieldViolations' in bad ? bad.fieldViolations.map((v) => v.field) : [];
  t.deepEqual(got.sort(), [
    'claimMatch.issuer',
    'claimMatch.issuerPattern',
    'claimMatch.issuerPattern',
    'claimMatch.subject',
  ]);
});

test('schemas: a patch may reset a relationship to null', (t) => {
  const { patch } = identitySchemas(true);
  t.deepEqual(parseInput(patch, { claimMatch: null }), { claimMatch: null });
  t.deepEqual(parseInput(patch, { staticKeys: null, name: 'n' }), { staticKeys: null, name: 'n' });
});
