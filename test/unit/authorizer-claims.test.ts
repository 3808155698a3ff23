import test from 'ava';
import { Authorizer, type Grant } from '../../src/auth/authorizer.js';
import type { Capability } from '../../src/auth/capabilities.js';
import { compileCondition } from '../../src/auth/condition.js';
import type { Principal } from '../../src/auth/principal.js';

/**
 * `token.claims` in the authorizer: a REST or gRPC principal's carried claims reach the
 * condition of a resource decision (`require`); a signed decision (`heldUntil`, the
 * registry token server) evaluates a conditional grant given the request context it is
 * handed, and its grant's expiry still bounds it.
 */
const ORG = 'a'.repeat(40);
const T = Date.parse('2026-06-01T10:00:00Z');
const caps = new Set<Capability>(['manifest.create']);
const BINDING = `${ORG}/${'b'.repeat(16)}`;

function authzFor(expression: string, expiresAt?: number) {
  const grant: Grant = {
    scope: ORG,
    capabilities: caps,
    bindings: [{ uid: BINDING, capabilities: caps }],
    condition: { bindingUid: BINDING, compiled: compileCondition(expression) },
    ...(expiresAt === undefined ? {} : { expiresAt }),
  };
  return new Authorizer({ grantsOf: () => Promise.resolve([grant]) }, () => T, undefined, {
    groupOf: (uid) => Promise.resolve({ uid, path: 'acme' }),
    log: () => undefined,
  });
}

const who = (ref: string | undefined, door: 'rest' | 'grpc' | 'cli' = 'rest'): Principal => ({
  kind: 'identity',
  uid: 'i',
  via: { door },
  ...(ref === undefined ? {} : { claims: new Map([['ref', ref]]) }),
});

test("require: REST and gRPC pass the principal's claims; other doors decide without", async (t) => {
  const authz = authzFor('token.claims.ref == "refs/heads/main"');
  const req = (p: Principal) => authz.require(p, 'manifest.create', ORG, 'manifest.create', 'R');
  await t.notThrowsAsync(req(who('refs/heads/main')));
  await t.notThrowsAsync(req(who('refs/heads/main', 'grpc')));
  await t.throwsAsync(req(who('refs/heads/dev')));
  await t.throwsAsync(req(who(undefined)), undefined, 'no claims: the condition errs, denied');
  await t.throwsAsync(req(who('refs/heads/main', 'cli')), undefined, 'no context off REST/gRPC');
});

test('heldUntil: a conditional grant holds per request context, until its expiry', async (t) => {
  const expression =
    'token.claims.ref == "refs/heads/main" && resource.type == "registry.arbor.dev/Repo" && ' +
    `resource.name.startsWith("${ORG}/") && request.capability == "manifest.create"`;
  const until = T + 600_000;
  const authz = authzFor(expression, until);
  const ctx = (ref: string, name = `${ORG}/app`) => ({
    resource: { type: 'registry.arbor.dev/Repo', name },
    claims: new Map([['ref', ref]]),
  });
  const p = who('ignored: heldUntil reads the context it is given');
  t.is(await authz.heldUntil(p, 'manifest.create', ORG, ctx('refs/heads/main')), until);
  t.is(await authz.heldUntil(p, 'manifest.create', ORG, ctx('refs/heads/dev')), undefined);
  t.is(
    await authz.heldUntil(p, 'manifest.create', ORG, ctx('refs/heads/main', 'other/app')),
    undefined,
  );
  t.is(await authz.heldUntil(p, 'manifest.create', ORG), undefined, 'no context: not held');
});
