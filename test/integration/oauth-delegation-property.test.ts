import test from 'ava';
import fc from 'fast-check';
import type { Capability } from '../../src/auth/capabilities.js';
import { isSelfOrBelow } from '../../src/core/uidp.js';
import type { GrpcTestServer } from '../helpers/grpc-server.js';
import { createBinding, createIdentity, createRole } from '../helpers/iam-fixtures.js';
import type { TestIssuer } from '../helpers/oidc-issuer.js';
import {
  ID_TOKEN,
  exchange,
  refusal,
  startOAuthWorld,
  stopOAuthWorld,
  workloadToken,
} from '../helpers/oauth-world.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';

/**
 * Delegation's one property (docs/oauth.md, Delegation): for random subject grants, policy
 * and scope, a delegated token's effective grants, as the server's own authenticator and
 * authorizer decide them for every door, are exactly the subject's grants ∩ the scope ∩
 * the policy at every group; and the exchange is refused (invalid_scope) exactly when that
 * would be nothing or the scope asks beyond it.
 */
let s: GrpcTestServer;
let issuer: TestIssuer;
let org: string;
let folder: string;
let sibling: string;
let agent: string;

test.before(async () => {
  ({ s, issuer, org, folder, sibling } = await startOAuthWorld());
  agent = await createIdentity(s.admin, org, 'agent', {
    issuer: issuer.url,
    subject: 'sub-agent',
  });
  await createBinding(s.admin, org, agent, await builtinRoleUid(s.admin, 'viewer'));
});
test.after.always(stopOAuthWorld);

async function can(token: string, cap: Capability, at: string): Promise<boolean> {
  const p = await s.arbor.authenticator.authenticate(token).catch(() => undefined);
  return p !== undefined && s.arbor.authz.can(p, cap, at);
}

async function setPolicy(body: Record<string, unknown>) {
  return s.admin.post('/iam/v2beta1/identities:setDelegationPolicy', body);
}

const POOL: Capability[] = [
  'groups.list',
  'repo.list',
  'identity.list',
  'role_bindings.list',
  'roles.list',
  'repo.create',
];

test.serial(
  'property: a delegated token holds exactly subject ∩ scope ∩ policy, at every group',
  async (t) => {
    const groups = [org, folder, sibling];
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.subarray(POOL, { minLength: 1 }),
        fc.constantFrom(...groups),
        fc.subarray(POOL, { minLength: 1 }),
        fc.option(fc.subarray(POOL, { minLength: 1 }), { nil: undefined }),
        async (roleCaps, at, policyCaps, scope) => {
          n++;
          const subject = await createIdentity(s.admin, org, `prop-${n}`, {
            issuer: issuer.url,
            subject: `sub-prop-${n}`,
          });
          const role = await createRole(s.admin, org, `prop-role-${n}`, roleCaps);
          await createBinding(s.admin, at, subject, role);
          const set = await setPolicy({
            identityUid: subject,
            actors: [agent],
            capabilities: policyCaps,
          });
          if (set.status !== 200) throw new Error(JSON.stringify(set.body));
          const form = {
            subject_token: await workloadToken(`sub-prop-${n}`),
            subject_token_type: ID_TOKEN,
            identity: subject,
            actor_token: await workloadToken('sub-agent'),
            actor_token_type: ID_TOKEN,
            actor_identity: agent,
            ...(scope === undefined ? {} : { scope: scope.join(' ') }),
          };
          const allowed = (c: Capability) =>
            roleCaps.includes(c) &&
            policyCaps.includes(c) &&
            (scope === undefined || scope.includes(c));
          const refusable =
            scope === undefined
              ? !POOL.some(allowed)
              : scope.some((c) => !policyCaps.includes(c) || !roleCaps.includes(c));
          if (refusable) {
            const r = (await refusal(form)) as { error: string };
            if (r.error !== 'invalid_scope') throw new Error(`refused as ${r.error}`);
            return;
          }
          const token = await exchange(form);
          for (const g of groups)
            for (const c of POOL) {
              const expected = allowed(c) && isSelfOrBelow(at, g);
              const actual = await can(token, c, g);
              if (actual !== expected)
                throw new Error(`${c} at ${g}: ${actual}, expected ${expected} (bound at ${at})`);
            }
        },
      ),
      { numRuns: 12, seed: 8693 },
    );
    t.pass();
  },
);
