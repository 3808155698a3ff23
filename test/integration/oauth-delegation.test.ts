import test, { type ExecutionContext } from 'ava';
import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import type { Capability } from '../../src/auth/capabilities.js';
import type { Principal } from '../../src/auth/principal.js';
import type { GrpcTestServer } from '../helpers/grpc-server.js';
import { createBinding, createIdentity } from '../helpers/iam-fixtures.js';
import type { TestIssuer } from '../helpers/oidc-issuer.js';
import {
  ACCESS,
  EXCHANGE,
  ID_TOKEN,
  ISSUER,
  exchange,
  oauthClient,
  refusal,
  startOAuthWorld,
  stopOAuthWorld,
  workloadToken,
} from '../helpers/oauth-world.js';
import { builtinRoleUid } from '../helpers/registry-fixtures.js';

/**
 * Delegation at the token endpoint (RFC 8693 `actor_token`, docs/oauth.md): an identity's
 * delegation policy, the exchange through openid-client, the `act` claim and its chains,
 * and the attacks (the property test is oauth-delegation-property.test.ts).
 */
let s: GrpcTestServer;
let issuer: TestIssuer;
let org: string;
let folder: string;
let ci: string;
let stranger: string;
let agent: string;

test.before(async () => {
  ({ s, issuer, org, folder, ci, stranger } = await startOAuthWorld());
  agent = await createIdentity(s.admin, org, 'agent', { issuer: issuer.url, subject: 'sub-agent' });
  await createBinding(s.admin, org, agent, await builtinRoleUid(s.admin, 'viewer'));
});
test.after.always(stopOAuthWorld);

const POLICY = '/iam/v2beta1/identities';

async function setPolicy(body: Record<string, unknown>, token?: string) {
  return (token ? s.client(token) : s.admin).post(`${POLICY}:setDelegationPolicy`, body);
}

/** Set a policy as the admin, asserting it was taken. */
async function setPolicyOk(t: ExecutionContext, body: Record<string, unknown>): Promise<void> {
  const set = await setPolicy(body);
  t.is(set.status, 200, JSON.stringify(set.body));
}

/** An API token of `uid`, from its workload token `sub`. */
async function apiTokenOf(uid: string, sub: string): Promise<string> {
  return exchange({
    subject_token: await workloadToken(sub),
    subject_token_type: ID_TOKEN,
    identity: uid,
  });
}

/** What the server's own authentication makes of `token` (every door's), or undefined. */
async function principalOf(token: string): Promise<Principal | undefined> {
  return s.arbor.authenticator.authenticate(token).then(
    (p) => p,
    () => undefined,
  );
}

async function can(token: string, cap: Capability, at: string): Promise<boolean> {
  const p = await principalOf(token);
  return p !== undefined && s.arbor.authz.can(p, cap, at);
}

test.serial(
  'policy: set, read and removed by who may update the identity; bounded; others learn nothing',
  async (t) => {
    const set = await setPolicy({
      identityUid: ci,
      actors: [agent],
      capabilities: ['groups.list', 'repo.list'],
      maxLifetimeSeconds: 900,
    });
    t.is(set.status, 200, JSON.stringify(set.body));
    t.deepEqual(set.body.actors, [agent]);
    t.deepEqual(set.body.capabilities, ['groups.list', 'repo.list']);
    const got = await s.admin.post(`${POLICY}:getDelegationPolicy`, { identityUid: ci });
    t.is(got.status, 200);
    t.is(got.body.maxLifetimeSeconds, 900);
    t.is(got.body.setBy, 'admin');
    // The stranger may not even see ci: NOT_FOUND, for the read and the write.
    const strangerToken = await apiTokenOf(stranger, 'sub-stranger');
    t.is(
      (await s.client(strangerToken).post(`${POLICY}:getDelegationPolicy`, { identityUid: ci }))
        .status,
      404,
    );
    t.is(
      (
        await setPolicy(
          { identityUid: ci, actors: [stranger], capabilities: ['groups.list'] },
          strangerToken,
        )
      ).status,
      404,
    );
    // ci sees itself (viewer) but may not update itself: PERMISSION_DENIED.
    const ciToken = await apiTokenOf(ci, 'sub-ci');
    t.is(
      (
        await setPolicy(
          { identityUid: ci, actors: [stranger], capabilities: ['groups.list'] },
          ciToken,
        )
      ).status,
      403,
    );
    // Bounds: 33 actors, a name outside the catalogue, more than a day, itself as actor.
    const many = Array.from(
      { length: 33 },
      (_, i) => `${org}/${(i + 16).toString(16).padStart(16, 'a')}`,
    );
    for (const bad of [
      { identityUid: ci, actors: many, capabilities: ['groups.list'] },
      { identityUid: ci, actors: [agent], capabilities: ['groups.everything'] },
      {
        identityUid: ci,
        actors: [agent],
        capabilities: ['groups.list'],
        maxLifetimeSeconds: 86_401,
      },
      { identityUid: ci, actors: [agent], capabilities: [] },
      { identityUid: ci, actors: [ci], capabilities: ['groups.list'] },
      { identityUid: ci, actors: [agent], capabilities: ['groups.list'], extra: 1 },
    ]) {
      const r = await setPolicy(bad);
      t.is(r.status, 400, JSON.stringify(bad).slice(0, 80));
    }
    const audit = await s.admin.get(
      `/audit/v2beta1/events?uidp.descendants_of=${org}&page_size=200`,
    );
    t.is(audit.status, 200);
    const recorded = (audit.body.events as { resourceType: string; resourceUid: string }[]).filter(
      (e) => e.resourceType === 'iam.arbor.dev/DelegationPolicy' && e.resourceUid === ci,
    );
    t.true(recorded.length >= 1, 'the policy set is in the audit trail');
  },
);

test.serial(
  'exchange: openid-client with actor_token gets a token for the subject carrying act, within the policy',
  async (t) => {
    await setPolicyOk(t, {
      identityUid: ci,
      actors: [agent],
      capabilities: ['groups.list', 'repo.list'],
      maxLifetimeSeconds: 900,
    });
    const subjectToken = await workloadToken('sub-ci');
    const actorToken = await apiTokenOf(agent, 'sub-agent');
    const res = await client.genericGrantRequest(await oauthClient(), EXCHANGE, {
      subject_token: subjectToken,
      subject_token_type: ID_TOKEN,
      identity: ci,
      actor_token: actorToken,
      actor_token_type: ACCESS,
    });
    t.is(res.issued_token_type, ACCESS);
    const claims = decodeJwt(res.access_token);
    t.is(claims.sub, ci);
    t.deepEqual(claims.act, { iss: ISSUER, sub: agent });
    t.is(claims.scope, 'groups.list repo.list', 'what the policy allows of what ci holds');
    t.true(claims.exp! - claims.iat! <= 900);
    // On the REST door: ci's group is readable, a capability beyond the policy is not held.
    t.is((await s.client(res.access_token).get(`/iam/v2beta1/groups/${org}`)).status, 200);
    t.true(await can(res.access_token, 'repo.list', folder));
    const ciToken = await apiTokenOf(ci, 'sub-ci');
    t.true(await can(ciToken, 'manifest.create', folder), 'ci holds it');
    t.false(await can(res.access_token, 'manifest.create', folder), 'the policy does not allow it');
    // Introspection answers act, to ci itself.
    const info = await client.tokenIntrospection(await oauthClient(ciToken), res.access_token);
    t.true(info.active);
    t.deepEqual(info.act, { iss: ISSUER, sub: agent });
    // A workload OIDC token as the actor, with actor_identity.
    const viaOidc = decodeJwt(
      await exchange({
        subject_token: subjectToken,
        subject_token_type: ID_TOKEN,
        identity: ci,
        actor_token: await workloadToken('sub-agent'),
        actor_token_type: ID_TOKEN,
        actor_identity: agent,
        scope: 'groups.list',
      }),
    );
    t.deepEqual(viaOidc.act, { iss: ISSUER, sub: agent });
    t.is(viaOidc.scope, 'groups.list');
    // Exchanged again without an actor, a delegated token stays delegated.
    const again = decodeJwt(
      await exchange({
        subject_token: res.access_token,
        subject_token_type: ACCESS,
        scope: 'repo.list',
      }),
    );
    t.deepEqual(again.act, { iss: ISSUER, sub: agent });
    t.deepEqual(again.arbor_actors, [agent]);
  },
);

test.serial(
  'attacks: actor not named, scope beyond, lifetime beyond, forged and expired actor tokens',
  async (t) => {
    await setPolicyOk(t, {
      identityUid: ci,
      actors: [agent],
      capabilities: ['groups.list'],
      maxLifetimeSeconds: 60,
    });
    const subject = {
      subject_token: await workloadToken('sub-ci'),
      subject_token_type: ID_TOKEN,
      identity: ci,
    };
    const agentToken = await apiTokenOf(agent, 'sub-agent');
    const strangerToken = await apiTokenOf(stranger, 'sub-stranger');
    t.deepEqual(
      await refusal({ ...subject, actor_token: strangerToken, actor_token_type: ACCESS }),
      {
        error: 'invalid_grant',
        status: 400,
      },
    );
    t.deepEqual(
      await refusal({
        ...subject,
        actor_token: agentToken,
        actor_token_type: ACCESS,
        scope: 'groups.list repo.list',
      }),
      { error: 'invalid_scope', status: 400 },
    );
    // Lifetime: never past the policy's 60 seconds, whatever the tokens' own.
    const short = decodeJwt(
      await exchange({ ...subject, actor_token: agentToken, actor_token_type: ACCESS }),
    );
    t.true(short.exp! - short.iat! <= 60);
    // A forged actor token (another signature), an expired one, a bare type.
    const [h, p] = agentToken.split('.');
    const forged = `${h}.${p}.${'A'.repeat(86)}`;
    t.deepEqual(await refusal({ ...subject, actor_token: forged, actor_token_type: ACCESS }), {
      error: 'invalid_grant',
      status: 400,
    });
    const expired = await issuer.mint(
      { sub: 'sub-agent', aud: ISSUER },
      { iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 },
    );
    t.deepEqual(
      await refusal({
        ...subject,
        actor_token: expired,
        actor_token_type: ID_TOKEN,
        actor_identity: agent,
      }),
      { error: 'invalid_grant', status: 400 },
    );
    t.deepEqual(await refusal({ ...subject, actor_token: agentToken }), {
      error: 'invalid_request',
      status: 400,
    });
    t.deepEqual(await refusal({ ...subject, actor_token_type: ACCESS }), {
      error: 'invalid_request',
      status: 400,
    });
    // A delegated token is no subject for a second delegation, and may not set policies.
    const delegated = await exchange({
      ...subject,
      actor_token: agentToken,
      actor_token_type: ACCESS,
    });
    t.deepEqual(
      await refusal({
        subject_token: delegated,
        subject_token_type: ACCESS,
        actor_token: agentToken,
        actor_token_type: ACCESS,
      }),
      { error: 'invalid_request', status: 400 },
    );
    t.is(
      (
        await setPolicy(
          { identityUid: ci, actors: [agent], capabilities: ['groups.list'] },
          delegated,
        )
      ).status,
      403,
    );
  },
);

test.serial(
  'a policy narrowed or removed after issue narrows or ends the tokens issued under it, on every request',
  async (t) => {
    await setPolicyOk(t, {
      identityUid: ci,
      actors: [agent],
      capabilities: ['groups.list', 'repo.list'],
      maxLifetimeSeconds: 900,
    });
    const token = await exchange({
      subject_token: await workloadToken('sub-ci'),
      subject_token_type: ID_TOKEN,
      identity: ci,
      actor_token: await apiTokenOf(agent, 'sub-agent'),
      actor_token_type: ACCESS,
    });
    t.true(await can(token, 'repo.list', folder));
    await setPolicyOk(t, {
      identityUid: ci,
      actors: [agent],
      capabilities: ['groups.list'],
      maxLifetimeSeconds: 900,
    });
    t.false(await can(token, 'repo.list', folder), 'the capability the policy dropped');
    t.true(await can(token, 'groups.list', folder));
    t.is(
      (await setPolicy({ identityUid: ci, actors: [stranger], capabilities: ['groups.list'] }))
        .status,
      200,
    );
    t.is(await principalOf(token), undefined, 'the actor no longer named');
    t.is(
      (await setPolicy({ identityUid: ci, actors: [agent], capabilities: ['groups.list'] })).status,
      200,
    );
    t.truthy(await principalOf(token));
    t.is((await setPolicy({ identityUid: ci, actors: [] })).status, 200);
    t.is(await principalOf(token), undefined, 'the policy removed');
    t.is((await s.client(token).get(`/iam/v2beta1/groups/${org}`)).status, 401);
    const ciToken = await apiTokenOf(ci, 'sub-ci');
    t.false((await client.tokenIntrospection(await oauthClient(ciToken), token)).active);
    t.is((await s.admin.post(`${POLICY}:getDelegationPolicy`, { identityUid: ci })).status, 404);
  },
);

test.serial(
  'chains: act nests prior actors, every link is checked, and a chain deeper than four is refused',
  async (t) => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const uid = await createIdentity(s.admin, org, `chain-${i}`, {
        issuer: issuer.url,
        subject: `sub-chain-${i}`,
      });
      await createBinding(s.admin, org, uid, await builtinRoleUid(s.admin, 'viewer'));
      ids.push(uid);
    }
    // chain-i+1 lets chain-i act for it.
    for (let i = 1; i < 6; i++)
      await setPolicyOk(t, {
        identityUid: ids[i],
        actors: [ids[i - 1]],
        capabilities: ['groups.list'],
      });
    let actorToken = await apiTokenOf(ids[0]!, 'sub-chain-0');
    for (let i = 1; i <= 4; i++) {
      actorToken = await exchange({
        subject_token: await workloadToken(`sub-chain-${i}`),
        subject_token_type: ID_TOKEN,
        identity: ids[i]!,
        actor_token: actorToken,
        actor_token_type: ACCESS,
      });
      t.true(await can(actorToken, 'groups.list', folder), `depth ${i}`);
    }
    const c = decodeJwt(actorToken);
    t.is(c.sub, ids[4]);
    t.deepEqual(c.act, {
      iss: ISSUER,
      sub: ids[3],
      act: {
        iss: ISSUER,
        sub: ids[2],
        act: { iss: ISSUER, sub: ids[1], act: { iss: ISSUER, sub: ids[0] } },
      },
    });
    t.deepEqual(
      await refusal({
        subject_token: await workloadToken('sub-chain-5'),
        subject_token_type: ID_TOKEN,
        identity: ids[5]!,
        actor_token: actorToken,
        actor_token_type: ACCESS,
      }),
      { error: 'invalid_request', status: 400 },
    );
    // A link in the middle removed: the whole chain above it stops.
    t.is((await setPolicy({ identityUid: ids[2], actors: [] })).status, 200);
    t.is(await principalOf(actorToken), undefined);
  },
);
