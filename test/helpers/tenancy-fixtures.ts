import { createGroup } from './fixtures.js';
import { createBinding, createIdentity, createRole } from './iam-fixtures.js';
import { must, type Client, type TestServer } from './server.js';

/**
 * Two tenants in one organization (folders A and B) and a sibling organization, each
 * holding one of every kind of resource, plus the callers of the attack suite:
 * the admin, owner/editor/viewer at A, the owner of B, an identity bound nowhere, and
 * anonymous. Identity callers hold real API tokens signed by the server's own issuer.
 */
export interface Tenancy {
  org: string;
  a: string;
  b: string;
  sibling: string;
  /** Built-in role uids by name. */
  builtin: Record<string, string>;
  /** One of each resource per place, keyed `<kind>@<place>` (place = org, a, b, sibling). */
  res: Record<string, string>;
  callers: Record<Caller, Client>;
  /** The identity uid behind each identity caller. */
  ids: Record<string, string>;
  /** The one-time code of the invite at each place. */
  inviteCode: Record<string, string>;
  tokenFor(identityUid: string): Promise<string>;
}

export const CALLERS = [
  'admin',
  'owner@a',
  'editor@a',
  'viewer@a',
  'owner@b',
  'unbound',
  'anonymous',
] as const;
export type Caller = (typeof CALLERS)[number];

export const PLACES = ['org', 'a', 'b', 'sibling'] as const;
export type Place = (typeof PLACES)[number];

export const SECRET = 'tenancy-idp-client-secret-0123456789';
export const digest = (c: string) => `sha256:${c.repeat(64)}`;

/** Build the two tenants and their callers on a fresh server. */
export async function buildTenancy(s: TestServer, tag = 't'): Promise<Tenancy> {
  const admin = s.admin;
  const api = s.api;
  const org = await createGroup(admin, `${tag}-org`, undefined, 'the organization');
  const a = await createGroup(admin, `${tag}-a`, org, 'tenant a');
  const b = await createGroup(admin, `${tag}-b`, org, 'tenant b');
  const sibling = await createGroup(admin, `${tag}-sibling`, undefined, 'another organization');
  const builtin: Record<string, string> = {};
  const roles = await must(
    'roles',
    api.GET('/iam/v2beta1/roles', { params: { query: { page_size: 200 } } }),
  );
  for (const r of roles.roles) if (!r.uid.includes('/')) builtin[r.name] = r.uid;
  const place: Record<Place, string> = { org, a, b, sibling };
  const res: Record<string, string> = {};
  const inviteCode: Record<string, string> = {};
  for (const p of PLACES) {
    const g = place[p];
    res[`group@${p}`] = g;
    res[`identity@${p}`] = await createIdentity(admin, g, `${p}-workload`, {
      issuer: 'https://issuer.example.com',
      subject: `${p}-subject`,
    });
    res[`role@${p}`] = await createRole(admin, g, `${p}-role`, ['groups.list', 'repo.list']);
    res[`binding@${p}`] = await createBinding(admin, g, res[`identity@${p}`]!, builtin.viewer!);
    const under = (uid: string) => ({ params: { path: { uid } } });
    const repo = await must(
      'repo',
      api.POST('/registry/v2beta1/repos/{uid}', { ...under(g), body: { name: `${p}-repo` } }),
    );
    res[`repo@${p}`] = repo.uid;
    res[`tag@${p}`] = (
      await must(
        'tag',
        api.POST('/registry/v2beta1/tags/{uid}', {
          ...under(repo.uid),
          body: { name: 'latest', digest: digest('a') },
        }),
      )
    ).uid;
    const invite = await must(
      'invite',
      api.POST('/iam/v2beta1/groupInvites/{uid}', {
        ...under(g),
        body: { roleUid: builtin.viewer!, ttl: '3600s' },
      }),
    );
    res[`invite@${p}`] = invite.uid;
    inviteCode[p] = invite.code!;
    res[`idp@${p}`] = (
      await must(
        'idp',
        api.POST('/iam/v2beta1/identityProviders/{uid}', {
          ...under(g),
          body: {
            name: `${p}-idp`,
            defaultRole: builtin.viewer!,
            oidc: { issuer: 'https://accounts.example.com', clientId: p, clientSecret: SECRET },
          },
        }),
      )
    ).uid;
    res[`aa@${p}`] = (
      await must(
        'account association',
        api.POST('/iam/v2beta1/accountAssociations/{uid}', {
          ...under(g),
          body: { name: `${p}-aa`, amazon: { account: '123456789012' } },
        }),
      )
    ).uid;
  }
  const tokenFor = async (identity: string) =>
    (await s.arbor.tokens.sign(identity, { iss: 'https://test.invalid', sub: identity })).token;
  const ids: Record<string, string> = {};
  const callers = { admin, anonymous: s.client() } as Record<Caller, Client>;
  const who: Array<[Caller, string, string, string]> = [
    ['owner@a', a, a, 'owner'],
    ['editor@a', a, a, 'editor'],
    ['viewer@a', a, a, 'viewer'],
    ['owner@b', b, b, 'owner'],
  ];
  for (const [name, home, at, role] of who) {
    const id = await createIdentity(admin, home, name.replace('@', '-at-'));
    await createBinding(admin, at, id, builtin[role]!);
    ids[name] = id;
    callers[name] = s.client(await tokenFor(id));
  }
  ids.unbound = await createIdentity(admin, org, 'unbound');
  callers.unbound = s.client(await tokenFor(ids.unbound));
  return { org, a, b, sibling, builtin, res, callers, ids, inviteCode, tokenFor };
}
